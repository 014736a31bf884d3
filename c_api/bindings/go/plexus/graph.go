package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Graph is a px_graph: imported from TensorFlow, or built operation by
// operation (or both: imported graphs can be extended).
type Graph struct {
	c *C.px_graph
}

func wrapGraph(c *C.px_graph) *Graph {
	g := &Graph{c}
	runtime.SetFinalizer(g, (*Graph).Close)
	return g
}

// NewGraph makes an empty graph to build.
func NewGraph() (*Graph, error) {
	var out *C.px_graph
	if err := call(func(s *C.px_status) C.px_code { return C.px_graph_create(&out, s) }); err != nil {
		return nil, err
	}
	return wrapGraph(out), nil
}

// ImportGraphDef imports a TensorFlow GraphDef (binary, else text).
func ImportGraphDef(data []byte) (*Graph, error) {
	var out *C.px_graph
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	err := call(func(s *C.px_status) C.px_code {
		return C.px_graph_import(p, C.size_t(len(data)), C.PX_GRAPH_FORMAT_AUTO, &out, s)
	})
	if err != nil {
		return nil, err
	}
	return wrapGraph(out), nil
}

// ImportGraphDefFile imports a GraphDef file (.pb, or .pbtxt text).
func ImportGraphDefFile(path string) (*Graph, error) {
	var cs cstrings
	defer cs.free()
	p := cs.add(path)
	var out *C.px_graph
	if err := call(func(s *C.px_status) C.px_code { return C.px_graph_import_file(p, &out, s) }); err != nil {
		return nil, err
	}
	return wrapGraph(out), nil
}

// Close destroys the graph; its operations become invalid.
func (g *Graph) Close() {
	if g != nil && g.c != nil {
		C.px_graph_destroy(g.c)
		g.c = nil
	}
}

// Operation is an operation (node) of a graph, valid while the graph is.
type Operation struct {
	c     *C.px_operation
	graph *Graph
}

// Output is output Index of an operation.
type Output struct {
	Op    *Operation
	Index int
}

// Out is output i of the operation.
func (op *Operation) Out(i int) Output { return Output{op, i} }

// OpSpec describes an operation to add.
type OpSpec struct {
	Type          string // "MatMul"
	Name          string // "": the type, made unique
	Inputs        []Output
	ControlInputs []*Operation
	Attrs         Attrs
	Device        string
}

// AddOperation adds an operation, checked at once (errors name the op and
// the operation and leave the graph unchanged).
func (g *Graph) AddOperation(spec OpSpec) (*Operation, error) {
	var cs cstrings
	defer cs.free()
	attrs, err := spec.Attrs.toC()
	if err != nil {
		return nil, err
	}
	defer C.px_attrs_destroy(attrs)
	// The spec goes to C with pointers to its arrays, so the arrays live in
	// C memory (cgo forbids Go memory holding pointers to Go memory).
	c := C.px_operation_spec{
		struct_size:        C.size_t(C.sizeof_px_operation_spec),
		op_type:            cs.add(spec.Type),
		name:               cs.optional(spec.Name),
		num_inputs:         C.size_t(len(spec.Inputs)),
		num_control_inputs: C.size_t(len(spec.ControlInputs)),
		attrs:              attrs,
		device:             cs.optional(spec.Device),
	}
	if n := len(spec.Inputs); n > 0 {
		c.inputs = (*C.px_output)(C.malloc(C.size_t(n) * C.size_t(C.sizeof_px_output)))
		defer C.free(unsafe.Pointer(c.inputs))
		inputs := unsafe.Slice(c.inputs, n)
		for i, in := range spec.Inputs {
			inputs[i].operation = nil
			if in.Op != nil {
				inputs[i].operation = in.Op.c
			}
			inputs[i].index = C.int(in.Index)
		}
	}
	if n := len(spec.ControlInputs); n > 0 {
		c.control_inputs = (**C.px_operation)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(c.control_inputs))
		controls := unsafe.Slice(c.control_inputs, n)
		for i, op := range spec.ControlInputs {
			controls[i] = nil
			if op != nil {
				controls[i] = op.c
			}
		}
	}
	var out *C.px_operation
	if err := call(func(s *C.px_status) C.px_code { return C.px_graph_add_operation(g.c, &c, &out, s) }); err != nil {
		return nil, err
	}
	return &Operation{out, g}, nil
}

// Placeholder adds a Placeholder of dtype and shape (nil dims: unknown rank).
func (g *Graph) Placeholder(name string, dtype DType, dims []int64) (*Operation, error) {
	shape := Shape{Dims: dims, UnknownRank: dims == nil}
	return g.AddOperation(OpSpec{Type: "Placeholder", Name: name, Attrs: Attrs{"dtype": dtype, "shape": shape}})
}

// Const adds a Const holding a copy of value.
func (g *Graph) Const(name string, value *Tensor) (*Operation, error) {
	return g.AddOperation(OpSpec{Type: "Const", Name: name, Attrs: Attrs{"value": value, "dtype": value.DType()}})
}

// Finish checks the whole graph as an imported GraphDef is checked.
func (g *Graph) Finish() error {
	return call(func(s *C.px_status) C.px_code { return C.px_graph_finish(g.c, s) })
}

// GraphDef is the graph as serialized TensorFlow GraphDef bytes.
func (g *Graph) GraphDef() ([]byte, error) {
	var buf *C.px_buffer
	if err := call(func(s *C.px_status) C.px_code { return C.px_graph_to_graphdef(g.c, &buf, s) }); err != nil {
		return nil, err
	}
	defer C.px_buffer_destroy(buf)
	return C.GoBytes(C.px_buffer_data(buf), C.int(C.px_buffer_size(buf))), nil
}

// NumOperations is the number of operations.
func (g *Graph) NumOperations() int { return int(C.px_graph_num_operations(g.c)) }

// Operation is the operation named name, or nil.
func (g *Graph) Operation(name string) *Operation {
	var cs cstrings
	defer cs.free()
	c := C.px_graph_operation_by_name(g.c, cs.add(name))
	if c == nil {
		return nil
	}
	return &Operation{c, g}
}

// Operations lists the operations in order.
func (g *Graph) Operations() []*Operation {
	n := g.NumOperations()
	out := make([]*Operation, n)
	for i := range out {
		out[i] = &Operation{C.px_graph_operation(g.c, C.size_t(i)), g}
	}
	return out
}

// Name is the operation's name.
func (op *Operation) Name() string { return C.GoString(C.px_operation_name(op.c)) }

// Type is the op type: "MatMul".
func (op *Operation) Type() string { return C.GoString(C.px_operation_op_type(op.c)) }

// Device is the requested device ("" when none).
func (op *Operation) Device() string { return C.GoString(C.px_operation_device(op.c)) }

// NumInputs is the number of data inputs.
func (op *Operation) NumInputs() int { return int(C.px_operation_num_inputs(op.c)) }

// Input is data input i: the output it reads.
func (op *Operation) Input(i int) Output {
	in := C.px_operation_input(op.c, C.int(i))
	if in.operation == nil {
		return Output{nil, -1}
	}
	return Output{&Operation{in.operation, op.graph}, int(in.index)}
}

// NumOutputs is the number of outputs.
func (op *Operation) NumOutputs() int { return int(C.px_operation_num_outputs(op.c)) }

// OutputDType is the dtype of output i.
func (op *Operation) OutputDType(i int) DType {
	return DType(C.px_operation_output_dtype(op.c, C.int(i)))
}

// OutputShape is the inferred shape of output i.
func (op *Operation) OutputShape(i int) (Shape, error) {
	var ndim C.int
	var dims *C.int64_t
	if err := call(func(s *C.px_status) C.px_code {
		return C.px_operation_output_shape(op.c, C.int(i), &ndim, &dims, s)
	}); err != nil {
		return Shape{}, err
	}
	if ndim < 0 {
		return Shape{UnknownRank: true}, nil
	}
	out := make([]int64, int(ndim))
	if ndim > 0 {
		copy(out, unsafe.Slice((*int64)(unsafe.Pointer(dims)), int(ndim)))
	}
	runtime.KeepAlive(op.graph)
	return Shape{Dims: out}, nil
}

// AttrInt reads an int attribute.
func (op *Operation) AttrInt(name string) (int64, error) {
	var cs cstrings
	defer cs.free()
	n := cs.add(name)
	var v C.int64_t
	err := call(func(s *C.px_status) C.px_code { return C.px_operation_attr_int(op.c, n, &v, s) })
	return int64(v), err
}

// AttrType reads a type attribute.
func (op *Operation) AttrType(name string) (DType, error) {
	var cs cstrings
	defer cs.free()
	n := cs.add(name)
	var v C.px_dtype
	err := call(func(s *C.px_status) C.px_code { return C.px_operation_attr_type(op.c, n, &v, s) })
	return DType(v), err
}

// Gradients adds the gradients of sum(ys) with respect to xs (tensor names
// "node:k") and returns the new graph and the name of each gradient ("" when
// ys do not depend on that x).
func (g *Graph) Gradients(ys, xs []string) (*Graph, []string, error) {
	var cs cstrings
	defer cs.free()
	yp, xp := cs.array(ys), cs.array(xs)
	var out *C.px_graph
	if err := call(func(s *C.px_status) C.px_code {
		return C.px_graph_gradients(g.c, yp, C.size_t(len(ys)), xp, C.size_t(len(xs)), nil, &out, s)
	}); err != nil {
		return nil, nil, err
	}
	ng := wrapGraph(out)
	names := make([]string, len(xs))
	for j := range names {
		if p := C.px_graph_gradient_name(out, C.size_t(j)); p != nil {
			names[j] = C.GoString(p)
		}
	}
	return ng, names, nil
}
