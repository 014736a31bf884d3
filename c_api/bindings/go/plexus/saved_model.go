package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"runtime"
	"sort"
	"unsafe"
)

// SavedModel is a loaded TensorFlow SavedModel (px_saved_model).
type SavedModel struct {
	c       *C.px_saved_model
	runtime *Runtime
}

// TensorSpec is a signature input or output.
type TensorSpec struct {
	Key, TensorName string
	DType           DType
	Shape           Shape
}

// Signature is a signature's inputs and outputs, in key order.
type Signature struct {
	Key             string
	Inputs, Outputs []TensorSpec
}

// LoadSavedModel loads the SavedModel in dir with tags (nil: {"serve"}) on
// device ("": the best device present).
func LoadSavedModel(r *Runtime, dir string, tags []string, device string) (*SavedModel, error) {
	var cs cstrings
	defer cs.free()
	d, dev, tp := cs.add(dir), cs.optional(device), cs.array(tags)
	var out *C.px_saved_model
	if err := call(func(s *C.px_status) C.px_code {
		return C.px_saved_model_load(r.c, d, tp, C.size_t(len(tags)), dev, &out, s)
	}); err != nil {
		return nil, err
	}
	m := &SavedModel{out, r}
	runtime.SetFinalizer(m, (*SavedModel).Close)
	return m, nil
}

// Close destroys the model.
func (m *SavedModel) Close() {
	if m != nil && m.c != nil {
		C.px_saved_model_destroy(m.c)
		m.c = nil
	}
}

func (m *SavedModel) spec(key *C.char, index int, input bool) (TensorSpec, error) {
	info := C.px_signature_tensor_info{struct_size: C.size_t(C.sizeof_px_signature_tensor_info)}
	err := call(func(s *C.px_status) C.px_code {
		if input {
			return C.px_saved_model_signature_input(m.c, key, C.size_t(index), &info, s)
		}
		return C.px_saved_model_signature_output(m.c, key, C.size_t(index), &info, s)
	})
	if err != nil {
		return TensorSpec{}, err
	}
	spec := TensorSpec{Key: C.GoString(info.key), TensorName: C.GoString(info.tensor_name), DType: DType(info.dtype)}
	if info.ndim < 0 {
		spec.Shape.UnknownRank = true
	} else {
		spec.Shape.Dims = make([]int64, int(info.ndim))
		if info.ndim > 0 {
			copy(spec.Shape.Dims, unsafe.Slice((*int64)(unsafe.Pointer(info.dims)), int(info.ndim)))
		}
	}
	return spec, nil
}

// Signatures lists the model's signatures in key order.
func (m *SavedModel) Signatures() ([]Signature, error) {
	n := int(C.px_saved_model_num_signatures(m.c))
	out := make([]Signature, 0, n)
	for i := 0; i < n; i++ {
		var key *C.char
		if err := call(func(s *C.px_status) C.px_code {
			return C.px_saved_model_signature_key(m.c, C.size_t(i), &key, s)
		}); err != nil {
			return nil, err
		}
		var nin, nout C.size_t
		if err := call(func(s *C.px_status) C.px_code {
			return C.px_saved_model_signature_arity(m.c, key, &nin, &nout, s)
		}); err != nil {
			return nil, err
		}
		sig := Signature{Key: C.GoString(key)}
		for j := 0; j < int(nin); j++ {
			spec, err := m.spec(key, j, true)
			if err != nil {
				return nil, err
			}
			sig.Inputs = append(sig.Inputs, spec)
		}
		for j := 0; j < int(nout); j++ {
			spec, err := m.spec(key, j, false)
			if err != nil {
				return nil, err
			}
			sig.Outputs = append(sig.Outputs, spec)
		}
		out = append(out, sig)
	}
	runtime.KeepAlive(m)
	return out, nil
}

// Run runs signature key with inputs by key and returns the outputs named.
func (m *SavedModel) Run(key string, inputs map[string]*Tensor, outputs []string) ([]*Tensor, error) {
	var cs cstrings
	defer cs.free()
	keys := make([]string, 0, len(inputs))
	for k := range inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := make([]*Tensor, len(keys))
	for i, k := range keys {
		values[i] = inputs[k]
	}
	in := handles(values)
	out := make([]*C.px_tensor, len(outputs))
	kp, ip, op := cs.add(key), cs.array(keys), cs.array(outputs)
	err := call(func(s *C.px_status) C.px_code {
		return C.px_saved_model_run(m.c, kp, ip, firstTensor(in), C.size_t(len(in)), op, C.size_t(len(outputs)),
			firstTensor(out), s)
	})
	runtime.KeepAlive(values)
	if err != nil {
		return nil, err
	}
	return wrapAll(out), nil
}
