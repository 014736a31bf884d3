package plexus

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test needs PLEXUS_CPU_PLUGIN (the cpu plugin's file) and
// PLEXUS_TEST_DATA (tests/data); CTest sets both.
func newRuntime(t *testing.T) *Runtime {
	t.Helper()
	plugin := os.Getenv("PLEXUS_CPU_PLUGIN")
	if plugin == "" {
		t.Fatal("set PLEXUS_CPU_PLUGIN to the cpu plugin's file")
	}
	r, err := NewRuntime(false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.LoadPlugin(plugin); err != nil {
		t.Fatal(err)
	}
	return r
}

func dataPath(t *testing.T, parts ...string) string {
	dir := os.Getenv("PLEXUS_TEST_DATA")
	if dir == "" {
		t.Fatal("set PLEXUS_TEST_DATA to tests/data")
	}
	return filepath.Join(append([]string{dir}, parts...)...)
}

func mustFloats(t *testing.T, tensor *Tensor) []float32 {
	t.Helper()
	v, err := tensor.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// A small graph, y = relu(x @ w) + b, built op by op and run as a session;
// the same computation eagerly must give the same numbers.
func TestBuildRunAndEager(t *testing.T) {
	r := newRuntime(t)
	defer r.Close()
	g, err := NewGraph()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	wv := []float32{1, -1, 2, 0.5}
	bv := []float32{0.25, -0.5}
	w, _ := NewFloat32([]int64{2, 2}, wv)
	b, _ := NewFloat32([]int64{2}, bv)
	x, err := g.Placeholder("x", Float, []int64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	wOp, err := g.Const("w", w)
	if err != nil {
		t.Fatal(err)
	}
	bOp, err := g.Const("b", b)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := g.AddOperation(OpSpec{Type: "MatMul", Name: "dense/MatMul", Inputs: []Output{x.Out(0), wOp.Out(0)},
		Attrs: Attrs{"transpose_b": false}})
	if err != nil {
		t.Fatal(err)
	}
	relu, err := g.AddOperation(OpSpec{Type: "Relu", Inputs: []Output{mm.Out(0)}})
	if err != nil {
		t.Fatal(err)
	}
	y, err := g.AddOperation(OpSpec{Type: "AddV2", Name: "y", Inputs: []Output{relu.Out(0), bOp.Out(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if shape, err := y.OutputShape(0); err != nil || len(shape.Dims) != 2 || shape.Dims[1] != 2 {
		t.Fatalf("y's shape: %v %v", shape, err)
	}
	if dt, err := mm.AttrType("T"); err != nil || dt != Float {
		t.Fatalf("MatMul's T: %v %v", dt, err)
	}
	if g.Operation("dense/MatMul").Type() != "MatMul" || relu.Name() != "Relu" || g.NumOperations() != 6 {
		t.Fatal("reading the graph back")
	}
	if in := y.Input(0); in.Op.Name() != "Relu" || in.Index != 0 {
		t.Fatal("y's first input")
	}

	xv := []float32{1, 2, -3, 1}
	xt, _ := NewFloat32([]int64{2, 2}, xv)
	want := make([]float32, 4)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			var acc float32
			for k := 0; k < 2; k++ {
				acc += xv[i*2+k] * wv[k*2+j]
			}
			want[i*2+j] = float32(math.Max(float64(acc), 0)) + bv[j]
		}
	}

	sess, err := NewSession(r, g, "CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.Run(map[string]*Tensor{"x": xt}, []string{"y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := mustFloats(t, out[0])
	for i := range want {
		if !near(float64(got[i]), float64(want[i]), 1e-6) {
			t.Fatalf("session: y[%d] = %v, want %v", i, got[i], want[i])
		}
	}

	ctx, err := NewEagerContext(r, "CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := ctx.Execute("MatMul", []*Tensor{xt, w}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := ctx.Execute("Relu", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ctx.Execute("AddV2", []*Tensor{rl[0], b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	eager := mustFloats(t, e[0])
	for i := range want {
		if eager[i] != got[i] {
			t.Fatalf("eager: y[%d] = %v, the session gave %v", i, eager[i], got[i])
		}
	}

	// An op with several outputs, and attributes given.
	rows, err := ctx.Execute("Unpack", []*Tensor{xt}, Attrs{"num": 2, "axis": 0})
	if err != nil || len(rows) != 2 {
		t.Fatalf("Unpack: %v outputs, %v", len(rows), err)
	}
	if second := mustFloats(t, rows[1]); second[0] != -3 {
		t.Fatalf("Unpack's second row: %v", second)
	}
	parts, err := ctx.Execute("Split", []*Tensor{mustInt32Scalar(t, 1), xt}, Attrs{"num_split": 2})
	if err != nil || len(parts) != 2 {
		t.Fatalf("Split: %v outputs, %v", len(parts), err)
	}

	// The graph as GraphDef bytes imports again and gives the same numbers.
	def, err := g.GraphDef()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := ImportGraphDef(def)
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	sess2, err := NewSession(r, g2, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	out2, err := sess2.Run(map[string]*Tensor{"x": xt}, []string{"y:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again := mustFloats(t, out2[0]); again[3] != got[3] {
		t.Fatalf("re-imported graph: %v, want %v", again, got)
	}

	// Gradients of the built graph: d(sum y)/dx.
	g3, names, err := g.Gradients([]string{"y"}, []string{"x"})
	if err != nil || names[0] == "" {
		t.Fatalf("gradients: %v %v", names, err)
	}
	defer g3.Close()
}

func mustInt32Scalar(t *testing.T, v int32) *Tensor {
	tensor, err := NewInt32(nil, []int32{v})
	if err != nil {
		t.Fatal(err)
	}
	return tensor
}

// Errors carry the C API's code and a message naming what was wrong.
func TestErrors(t *testing.T) {
	r := newRuntime(t)
	defer r.Close()
	g, _ := NewGraph()
	defer g.Close()
	x, _ := g.Placeholder("x", Float, []int64{3})
	n, _ := g.Placeholder("n", Int32, []int64{3})
	_, err := g.AddOperation(OpSpec{Type: "AddV2", Name: "bad", Inputs: []Output{x.Out(0), n.Out(0)}})
	e, ok := err.(*Error)
	if !ok || e.Code != InvalidArgument || !strings.Contains(e.Message, "AddV2") {
		t.Fatalf("mixed dtypes: %v", err)
	}
	if _, err := g.AddOperation(OpSpec{Type: "NoSuchOp"}); err == nil || err.(*Error).Code != NotFound {
		t.Fatalf("unknown op: %v", err)
	}
	if _, err := g.Placeholder("x", Float, nil); err == nil || err.(*Error).Code != AlreadyExists {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := g.AddOperation(OpSpec{Type: "Relu", Attrs: Attrs{"T": struct{}{}}}); err == nil ||
		!strings.Contains(err.Error(), "cannot be an attribute value") {
		t.Fatalf("bad attribute: %v", err)
	}
	if g.NumOperations() != 2 {
		t.Fatalf("the graph changed: %d operations", g.NumOperations())
	}
	if _, err := ImportGraphDef([]byte("not a graph {")); err == nil {
		t.Fatal("a malformed GraphDef imported")
	}
	if _, err := NewSession(r, g, "TPU:3"); err == nil || !strings.Contains(err.Error(), "TPU:3") {
		t.Fatalf("unknown device: %v", err)
	}
	ctx, _ := NewEagerContext(r, "")
	defer ctx.Close()
	a, _ := NewFloat32([]int64{2}, []float32{1, 2})
	i, _ := NewInt32([]int64{2}, []int32{1, 2})
	if _, err := ctx.Execute("AddV2", []*Tensor{a, i}, nil); err == nil || err.(*Error).Code != InvalidArgument {
		t.Fatalf("eager dtypes: %v", err)
	}
}

// A frozen TensorFlow graph (tests/data/tf_graphs/regression_frozen),
// imported, extended with an operation and run.
func TestTensorFlowGraph(t *testing.T) {
	r := newRuntime(t)
	defer r.Close()
	g, err := ImportGraphDefFile(dataPath(t, "tf_graphs", "regression_frozen", "frozen.pb"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pred := g.Operation("pred")
	if pred == nil {
		t.Fatal("no operation 'pred'")
	}
	if _, err := g.AddOperation(OpSpec{Type: "AddV2", Name: "twice", Inputs: []Output{pred.Out(0), pred.Out(0)}}); err != nil {
		t.Fatal(err)
	}
	sess, err := NewSession(r, g, "CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	x, _ := NewFloat32([]int64{3}, []float32{1, 2, 3})
	out, err := sess.Run(map[string]*Tensor{"X": x}, []string{"pred", "twice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.2634872, 1.4774489, 1.6914107} // tests/data/tf_graphs/MANIFEST.md
	p, tw := mustFloats(t, out[0]), mustFloats(t, out[1])
	for i := range want {
		if !near(float64(p[i]), want[i], 1e-6) || !near(float64(tw[i]), 2*want[i], 2e-6) {
			t.Fatalf("pred = %v, twice = %v, want %v", p, tw, want)
		}
	}
}

// TensorFlow SavedModels: half_plus_two (TF2) and the TF1 model's
// signatures, with their specs.
func TestSavedModel(t *testing.T) {
	r := newRuntime(t)
	defer r.Close()
	m, err := LoadSavedModel(r, dataPath(t, "tf_graphs", "half_plus_two_tf2", "00000123"), nil, "CPU:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x, _ := NewFloat32([]int64{1}, []float32{3})
	out, err := m.Run("serving_default", map[string]*Tensor{"x": x}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	if y := mustFloats(t, out[0]); y[0] != 3.5 {
		t.Fatalf("half_plus_two(3) = %v, want 3.5", y)
	}

	m1, err := LoadSavedModel(r, dataPath(t, "tf_graphs", "half_plus_two_tf1", "00000123"), []string{"serve"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	sigs, err := m1.Signatures()
	if err != nil || len(sigs) != 5 {
		t.Fatalf("signatures: %d, %v", len(sigs), err)
	}
	found := false
	for _, s := range sigs {
		if s.Key == "serving_default" {
			found = true
			in := s.Inputs[0]
			if in.Key != "x" || in.TensorName != "x:0" || in.DType != Float || len(in.Shape.Dims) != 2 || in.Shape.Dims[0] != -1 {
				t.Fatalf("serving_default's input: %+v", in)
			}
		}
	}
	if !found {
		t.Fatal("no serving_default signature")
	}
	x1, _ := NewFloat32([]int64{3, 1}, []float32{1, 2, 5})
	out1, err := m1.Run("serving_default", map[string]*Tensor{"x": x1}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	if y := mustFloats(t, out1[0]); y[0] != 2.5 || y[2] != 4.5 {
		t.Fatalf("half_plus_two_tf1: %v", y)
	}
	if _, err := m1.Run("nope", nil, nil); err == nil || !strings.Contains(err.Error(), "serving_default") {
		t.Fatalf("unknown signature: %v", err)
	}
}

// String tensors keep any bytes.
func TestStrings(t *testing.T) {
	s, err := NewStrings([]int64{2}, []string{"a\x00b", ""})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Strings()
	if err != nil || len(v) != 2 || v[0] != "a\x00b" || v[1] != "" {
		t.Fatalf("strings: %q %v", v, err)
	}
}

// Session options, a callable from several goroutines with run metadata,
// and a checkpoint round trip.
func TestOptionsCallablesCheckpoints(t *testing.T) {
	r := newRuntime(t)
	defer r.Close()
	g, _ := NewGraph()
	defer g.Close()
	x, _ := g.Placeholder("x", Float, []int64{3})
	relu, _ := g.AddOperation(OpSpec{Type: "Relu", Name: "relu", Inputs: []Output{x.Out(0)}, Device: "GPU:7"})
	if _, err := g.AddOperation(OpSpec{Type: "Neg", Name: "y", Inputs: []Output{relu.Out(0)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSessionWithOptions(r, g, SessionOptions{DisabledPasses: []string{"nope"}}); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown pass: %v", err)
	}
	strict, err := NewSessionWithOptions(r, g, SessionOptions{StrictPlacement: true})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	xt, _ := NewFloat32([]int64{3}, []float32{-1, 2, -3})
	if _, err := strict.Run(map[string]*Tensor{"x": xt}, []string{"y"}, nil); err == nil ||
		!strings.Contains(err.Error(), "GPU:7") {
		t.Fatalf("strict placement: %v", err)
	}
	sess, err := NewSessionWithOptions(r, g, SessionOptions{Device: "CPU:0", DisableOptimizer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	c, err := sess.MakeCallable([]string{"x"}, []string{"y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var info RunInfo
	out, err := c.Run([]*Tensor{xt}, 10*time.Second, &info)
	if err != nil {
		t.Fatal(err)
	}
	if v := mustFloats(t, out[0]); v[0] != 0 || v[1] != -2 {
		t.Fatalf("callable: %v", v)
	}
	if !info.BuiltExecutor || len(info.Nodes) < 2 || info.Wall <= 0 {
		t.Fatalf("run info: %+v", info)
	}
	done := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			for k := 0; k < 50; k++ {
				o, err := c.Run([]*Tensor{xt}, 0, nil)
				if err != nil {
					done <- err
					return
				}
				if v, _ := o[0].Float32s(); v[1] != -2 {
					done <- fmt.Errorf("got %v", v)
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sess.MakeCallable([]string{"x"}, []string{"missing:0"}, nil); err == nil {
		t.Fatal("a callable with an unknown fetch was made")
	}

	prefix := filepath.Join(t.TempDir(), "ckpt")
	if err := WriteCheckpoint(prefix, map[string]*Tensor{"x": xt, "y": out[0]}); err != nil {
		t.Fatal(err)
	}
	keys, err := CheckpointKeys(prefix)
	if err != nil || len(keys) != 2 || keys[0] != "x" {
		t.Fatalf("keys: %v %v", keys, err)
	}
	back, err := ReadCheckpoint(prefix, "y")
	if err != nil {
		t.Fatal(err)
	}
	if v := mustFloats(t, back); v[1] != -2 {
		t.Fatalf("read back: %v", v)
	}
	if _, err := ReadCheckpoint(prefix, "z"); err == nil || err.(*Error).Code != NotFound {
		t.Fatalf("missing key: %v", err)
	}
	if err := SetLogLevel(LogLevel(42)); err == nil {
		t.Fatal("log level 42 was accepted")
	}
}
