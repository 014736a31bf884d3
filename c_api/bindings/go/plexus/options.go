package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"time"
)

// SessionOptions are px_session_options. The zero value is the defaults;
// set what you need.
type SessionOptions struct {
	Device                  string
	DisableOptimizer        bool
	DisabledPasses          []string // "cse", "fuse", ...
	IntraOpThreads          int32    // 0: the process budget
	DeviceGraphs            bool
	KeepFetchesOnDevice     bool // fetches on a device stay there
	Trace                   bool
	StrictPlacement         bool
	DisableInterOp          bool
	MaxShapeSpecializations int32 // 0: the default
}

// NewSessionWithOptions opens a session with options.
func NewSessionWithOptions(r *Runtime, g *Graph, o SessionOptions) (*Session, error) {
	var cs cstrings
	defer cs.free()
	c := C.px_session_options{struct_size: C.size_t(C.sizeof_px_session_options)}
	c.device = cs.optional(o.Device)
	c.optimizer, c.inter_op_parallelism, c.device_graphs, c.memory_plan = -1, -1, -1, -1
	c.fetch_to_host, c.trace, c.placement, c.max_shape_specializations = -1, -1, -1, -1
	if o.DisableOptimizer {
		c.optimizer = 0
	}
	if len(o.DisabledPasses) > 0 {
		c.disabled_passes = cs.add(strings.Join(o.DisabledPasses, ","))
	}
	c.intra_op_threads = C.int32_t(o.IntraOpThreads)
	if o.DeviceGraphs {
		c.device_graphs = 1
	}
	if o.KeepFetchesOnDevice {
		c.fetch_to_host = 0
	}
	if o.Trace {
		c.trace = 1
	}
	if o.StrictPlacement {
		c.placement = C.PX_PLACEMENT_STRICT
	}
	if o.DisableInterOp {
		c.inter_op_parallelism = 0
	}
	if o.MaxShapeSpecializations > 0 {
		c.max_shape_specializations = C.int32_t(o.MaxShapeSpecializations)
	}
	var out *C.px_session
	if err := call(func(s *C.px_status) C.px_code {
		return C.px_session_create_with_options(r.c, g.c, &c, &out, s)
	}); err != nil {
		return nil, err
	}
	runtime.KeepAlive(g)
	sess := &Session{out, r}
	runtime.SetFinalizer(sess, (*Session).Close)
	return sess, nil
}

// Callable is one feed/fetch signature of a session, checked once.
type Callable struct {
	c       *C.px_callable
	session *Session
	fetches int
}

// MakeCallable prepares a signature: unknown names fail here.
func (sess *Session) MakeCallable(feeds, fetches, targets []string) (*Callable, error) {
	var cs cstrings
	defer cs.free()
	fp, fetchp, tp := cs.array(feeds), cs.array(fetches), cs.array(targets)
	var out *C.px_callable
	if err := call(func(s *C.px_status) C.px_code {
		return C.px_session_make_callable(sess.c, fp, C.size_t(len(feeds)), fetchp, C.size_t(len(fetches)), tp,
			C.size_t(len(targets)), &out, s)
	}); err != nil {
		return nil, err
	}
	c := &Callable{out, sess, len(fetches)}
	runtime.SetFinalizer(c, (*Callable).Close)
	return c, nil
}

// Close frees the callable.
func (c *Callable) Close() {
	if c != nil && c.c != nil {
		C.px_callable_destroy(c.c)
		c.c = nil
	}
}

// RunInfo is what one run reports: each node's op, device and time.
type RunInfo struct {
	Wall          time.Duration
	BuiltExecutor bool
	Nodes         []NodeTime
}

// NodeTime is one node of a run.
type NodeTime struct {
	Node, Op, Device string
	Start, Duration  time.Duration
}

// Run runs the signature with feeds in order; timeout 0 is none. With
// info non-nil, the run's metadata is filled in.
func (c *Callable) Run(feeds []*Tensor, timeout time.Duration, info *RunInfo) ([]*Tensor, error) {
	opts := C.px_run_options{struct_size: C.size_t(C.sizeof_px_run_options), timeout_seconds: C.double(timeout.Seconds())}
	var md *C.px_run_metadata
	if info != nil {
		if err := call(func(s *C.px_status) C.px_code { return C.px_run_metadata_create(&md, s) }); err != nil {
			return nil, err
		}
		defer C.px_run_metadata_destroy(md)
		opts.metadata = md
	}
	in := handles(feeds)
	out := make([]*C.px_tensor, c.fetches+1)
	err := call(func(s *C.px_status) C.px_code {
		return C.px_callable_run(c.c, &opts, firstTensor(in), &out[0], s)
	})
	runtime.KeepAlive(feeds)
	if err != nil {
		return nil, err
	}
	if info != nil {
		*info = RunInfo{Wall: time.Duration(C.px_run_metadata_wall_ns(md)),
			BuiltExecutor: C.px_run_metadata_built_executor(md) != 0}
		for i := 0; i < int(C.px_run_metadata_num_nodes(md)); i++ {
			var node, op, device *C.char
			var start, dur C.int64_t
			if err := call(func(s *C.px_status) C.px_code {
				return C.px_run_metadata_node(md, C.size_t(i), &node, &op, &device, &start, &dur, s)
			}); err != nil {
				return nil, err
			}
			info.Nodes = append(info.Nodes, NodeTime{C.GoString(node), C.GoString(op), C.GoString(device),
				time.Duration(start), time.Duration(dur)})
		}
	}
	return wrapAll(out[:c.fetches]), nil
}

// WriteCheckpoint writes a TensorFlow checkpoint of host tensors by key.
func WriteCheckpoint(prefix string, values map[string]*Tensor) error {
	var cs cstrings
	defer cs.free()
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	ts := make([]*Tensor, len(keys))
	for i, k := range keys {
		ts[i] = values[k]
	}
	kp, p := cs.array(keys), cs.add(prefix)
	hs := handles(ts)
	err := call(func(s *C.px_status) C.px_code {
		return C.px_checkpoint_write(p, kp, firstTensor(hs), C.size_t(len(keys)), s)
	})
	runtime.KeepAlive(ts)
	return err
}

// ReadCheckpoint reads tensor key of the checkpoint at prefix.
func ReadCheckpoint(prefix, key string) (*Tensor, error) {
	var cs cstrings
	defer cs.free()
	p, k := cs.add(prefix), cs.add(key)
	var out *C.px_tensor
	if err := call(func(s *C.px_status) C.px_code { return C.px_checkpoint_read(p, k, &out, s) }); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// CheckpointKeys lists a checkpoint's keys, sorted.
func CheckpointKeys(prefix string) ([]string, error) {
	var cs cstrings
	defer cs.free()
	p := cs.add(prefix)
	var buf *C.px_buffer
	var n C.size_t
	if err := call(func(s *C.px_status) C.px_code { return C.px_checkpoint_keys(p, &buf, &n, s) }); err != nil {
		return nil, err
	}
	defer C.px_buffer_destroy(buf)
	bytes := C.GoBytes(C.px_buffer_data(buf), C.int(C.px_buffer_size(buf)))
	keys := strings.Split(strings.TrimSuffix(string(bytes), "\x00"), "\x00")
	if n == 0 {
		keys = nil
	}
	return keys, nil
}

// LogLevel is a px_log_level.
type LogLevel int

const (
	LogDebug   LogLevel = C.PX_LOG_LEVEL_DEBUG
	LogInfo    LogLevel = C.PX_LOG_LEVEL_INFO
	LogWarning LogLevel = C.PX_LOG_LEVEL_WARNING
	LogError   LogLevel = C.PX_LOG_LEVEL_ERROR
)

// SetLogLevel sets the process's log threshold.
func SetLogLevel(level LogLevel) error {
	return call(func(s *C.px_status) C.px_code { return C.px_log_set_level(C.px_log_level(level), s) })
}
