package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import "runtime"

// EagerContext runs ops one at a time (px_eager_context), with the same
// kernels and per-op caches as Python's eager mode.
type EagerContext struct {
	c       *C.px_eager_context
	runtime *Runtime
}

// NewEagerContext makes a context whose ops run on device ("": where their
// first input is, else the host device).
func NewEagerContext(r *Runtime, device string) (*EagerContext, error) {
	var cs cstrings
	defer cs.free()
	opts := C.px_eager_options{struct_size: C.size_t(C.sizeof_px_eager_options), device: cs.optional(device)}
	var out *C.px_eager_context
	if err := call(func(s *C.px_status) C.px_code { return C.px_eager_context_create(r.c, &opts, &out, s) }); err != nil {
		return nil, err
	}
	ctx := &EagerContext{out, r}
	runtime.SetFinalizer(ctx, (*EagerContext).Close)
	return ctx, nil
}

// Close destroys the context (tensors it made stay valid).
func (ctx *EagerContext) Close() {
	if ctx != nil && ctx.c != nil {
		C.px_eager_context_destroy(ctx.c)
		ctx.c = nil
	}
}

// Execute runs op on inputs with attrs (type attributes and list lengths are
// inferred from the inputs when left out) and returns its outputs.
func (ctx *EagerContext) Execute(op string, inputs []*Tensor, attrs Attrs) ([]*Tensor, error) {
	var cs cstrings
	defer cs.free()
	a, err := attrs.toC()
	if err != nil {
		return nil, err
	}
	defer C.px_attrs_destroy(a)
	name := cs.add(op)
	in := handles(inputs)
	// Room for most ops; an op with more outputs fails with OUT_OF_RANGE
	// before anything runs, and the call is made again with room for all.
	capacity := 8
	for {
		out := make([]*C.px_tensor, capacity)
		var got C.size_t
		err = call(func(s *C.px_status) C.px_code {
			return C.px_eager_execute(ctx.c, name, firstTensor(in), C.size_t(len(in)), a, nil, &out[0],
				C.size_t(capacity), &got, s)
		})
		if e, ok := err.(*Error); ok && e.Code == OutOfRange && capacity < 1<<16 {
			var n C.size_t
			if call(func(s *C.px_status) C.px_code {
				return C.px_eager_num_outputs(ctx.c, name, inputTypes(inputs), C.size_t(len(inputs)), a, nil, &n, s)
			}) == nil && int(n) > capacity {
				capacity = int(n)
				continue
			}
		}
		runtime.KeepAlive(inputs)
		if err != nil {
			return nil, err
		}
		return wrapAll(out[:int(got)]), nil
	}
}

// inputTypes is a C array of the inputs' dtypes, freed by the garbage
// collector (it holds no pointers).
func inputTypes(inputs []*Tensor) *C.px_dtype {
	if len(inputs) == 0 {
		return nil
	}
	dtypes := make([]C.px_dtype, len(inputs))
	for i, t := range inputs {
		if t != nil {
			dtypes[i] = C.px_tensor_dtype(t.c)
		}
	}
	return &dtypes[0]
}
