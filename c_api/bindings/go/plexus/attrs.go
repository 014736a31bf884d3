package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"fmt"
	"sort"
	"unsafe"
)

// Shape is a shape attribute: nil Dims with UnknownRank for an unknown
// rank, -1 for an unknown dimension.
type Shape struct {
	Dims        []int64
	UnknownRank bool
}

// Func names a function of the graph's library (a function attribute).
type Func string

// Attrs are attribute values by name. Values: int, int32, int64, float32,
// float64, bool, DType, string, []byte, Shape, *Tensor, Func, []int64,
// []int, []float32, []bool, []DType, []string, []Shape.
type Attrs map[string]interface{}

// toC builds a px_attrs from attrs (nil: none). The caller destroys it.
func (attrs Attrs) toC() (*C.px_attrs, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	var out *C.px_attrs
	if err := call(func(s *C.px_status) C.px_code { return C.px_attrs_create(&out, s) }); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := setAttr(out, name, attrs[name]); err != nil {
			C.px_attrs_destroy(out)
			return nil, err
		}
	}
	return out, nil
}

func setAttr(a *C.px_attrs, name string, value interface{}) error {
	var cs cstrings
	defer cs.free()
	n := cs.add(name)
	unsupported := false
	err := call(func(s *C.px_status) C.px_code {
		switch v := value.(type) {
		case int:
			return C.px_attrs_set_int(a, n, C.int64_t(v), s)
		case int32:
			return C.px_attrs_set_int(a, n, C.int64_t(v), s)
		case int64:
			return C.px_attrs_set_int(a, n, C.int64_t(v), s)
		case float32:
			return C.px_attrs_set_float(a, n, C.float(v), s)
		case float64:
			return C.px_attrs_set_float(a, n, C.float(v), s)
		case bool:
			return C.px_attrs_set_bool(a, n, boolInt(v), s)
		case DType:
			return C.px_attrs_set_type(a, n, C.px_dtype(v), s)
		case string:
			p := cs.add(v)
			return C.px_attrs_set_string(a, n, unsafe.Pointer(p), C.size_t(len(v)), s)
		case []byte:
			p := C.CBytes(v)
			defer C.free(p)
			return C.px_attrs_set_string(a, n, p, C.size_t(len(v)), s)
		case Shape:
			if v.UnknownRank {
				return C.px_attrs_set_shape(a, n, nil, -1, s)
			}
			return C.px_attrs_set_shape(a, n, dimsPtr(v.Dims), C.int(len(v.Dims)), s)
		case *Tensor:
			return C.px_attrs_set_tensor(a, n, v.c, s)
		case Func:
			return C.px_attrs_set_func(a, n, cs.add(string(v)), s)
		case []int64:
			return C.px_attrs_set_int_list(a, n, dimsPtr(v), C.size_t(len(v)), s)
		case []int:
			w := make([]int64, len(v))
			for i, x := range v {
				w[i] = int64(x)
			}
			return C.px_attrs_set_int_list(a, n, dimsPtr(w), C.size_t(len(w)), s)
		case []float32:
			var p *C.float
			if len(v) > 0 {
				p = (*C.float)(unsafe.Pointer(&v[0]))
			}
			return C.px_attrs_set_float_list(a, n, p, C.size_t(len(v)), s)
		case []bool:
			w := make([]C.int, len(v))
			for i, x := range v {
				w[i] = boolInt(x)
			}
			var p *C.int
			if len(w) > 0 {
				p = &w[0]
			}
			return C.px_attrs_set_bool_list(a, n, p, C.size_t(len(w)), s)
		case []DType:
			w := make([]C.px_dtype, len(v))
			for i, x := range v {
				w[i] = C.px_dtype(x)
			}
			var p *C.px_dtype
			if len(w) > 0 {
				p = &w[0]
			}
			return C.px_attrs_set_type_list(a, n, p, C.size_t(len(w)), s)
		case []string:
			lengths := make([]C.size_t, len(v))
			for i, x := range v {
				lengths[i] = C.size_t(len(x))
			}
			var lp *C.size_t
			if len(lengths) > 0 {
				lp = &lengths[0]
			}
			return C.px_attrs_set_string_list(a, n, cs.array(v), lp, C.size_t(len(v)), s)
		case []Shape:
			ndims := make([]C.int, len(v))
			// The dims arrays go to C memory: the array of pointers must not
			// point into Go memory.
			ptrs := (**C.int64_t)(C.malloc(C.size_t(len(v)+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
			defer C.free(unsafe.Pointer(ptrs))
			ps := unsafe.Slice(ptrs, len(v)+1)
			for i, x := range v {
				ps[i] = nil
				if x.UnknownRank {
					ndims[i] = -1
					continue
				}
				ndims[i] = C.int(len(x.Dims))
				if len(x.Dims) > 0 {
					p := C.CBytes(asBytes(x.Dims))
					defer C.free(p)
					ps[i] = (*C.int64_t)(p)
				}
			}
			var np *C.int
			if len(ndims) > 0 {
				np = &ndims[0]
			}
			return C.px_attrs_set_shape_list(a, n, ptrs, np, C.size_t(len(v)), s)
		default:
			unsupported = true
			return C.PX_STATUS_INVALID_ARGUMENT
		}
	})
	if unsupported {
		return &Error{Code: InvalidArgument,
			Message: fmt.Sprintf("attribute '%s': a Go %T cannot be an attribute value", name, value)}
	}
	return err
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
