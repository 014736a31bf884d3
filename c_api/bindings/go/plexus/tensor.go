package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// DType is a TensorFlow DataType number (px_dtype).
type DType int32

const (
	Float      DType = C.PX_DTYPE_FLOAT
	Double     DType = C.PX_DTYPE_DOUBLE
	Int32      DType = C.PX_DTYPE_INT32
	Uint8      DType = C.PX_DTYPE_UINT8
	Int16      DType = C.PX_DTYPE_INT16
	Int8       DType = C.PX_DTYPE_INT8
	String     DType = C.PX_DTYPE_STRING
	Complex64  DType = C.PX_DTYPE_COMPLEX64
	Int64      DType = C.PX_DTYPE_INT64
	Bool       DType = C.PX_DTYPE_BOOL
	BFloat16   DType = C.PX_DTYPE_BFLOAT16
	Uint16     DType = C.PX_DTYPE_UINT16
	Complex128 DType = C.PX_DTYPE_COMPLEX128
	Half       DType = C.PX_DTYPE_HALF
	Uint32     DType = C.PX_DTYPE_UINT32
	Uint64     DType = C.PX_DTYPE_UINT64
)

// String is the C API's name of the type: "float", "int32", ...
func (d DType) String() string { return C.GoString(C.px_dtype_name(C.px_dtype(d))) }

// Size is the bytes per element; 0 for types without a fixed size.
func (d DType) Size() int { return int(C.px_dtype_size(C.px_dtype(d))) }

// Tensor is a px_tensor: in host memory, or on a device for eager results.
type Tensor struct {
	c *C.px_tensor
}

func wrapTensor(c *C.px_tensor) *Tensor {
	t := &Tensor{c}
	runtime.SetFinalizer(t, (*Tensor).Close)
	return t
}

// Close frees the tensor; later calls do nothing.
func (t *Tensor) Close() {
	if t != nil && t.c != nil {
		C.px_tensor_destroy(t.c)
		t.c = nil
	}
}

func dimsPtr(dims []int64) *C.int64_t {
	if len(dims) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&dims[0]))
}

// NewTensor copies `data` (row-major elements of a fixed-size dtype, as
// bytes) into a new tensor of shape dims.
func NewTensor(dtype DType, dims []int64, data []byte) (*Tensor, error) {
	var out *C.px_tensor
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	err := call(func(s *C.px_status) C.px_code {
		return C.px_tensor_create_from_data(C.px_dtype(dtype), dimsPtr(dims), C.int(len(dims)), ptr,
			C.size_t(len(data)), &out, s)
	})
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

func asBytes[T any](values []T) []byte {
	if len(values) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*int(unsafe.Sizeof(zero)))
}

// NewFloat32 makes a float tensor of shape dims holding values.
func NewFloat32(dims []int64, values []float32) (*Tensor, error) {
	return NewTensor(Float, dims, asBytes(values))
}

// NewFloat64 makes a double tensor.
func NewFloat64(dims []int64, values []float64) (*Tensor, error) {
	return NewTensor(Double, dims, asBytes(values))
}

// NewInt32 makes an int32 tensor.
func NewInt32(dims []int64, values []int32) (*Tensor, error) {
	return NewTensor(Int32, dims, asBytes(values))
}

// NewInt64 makes an int64 tensor.
func NewInt64(dims []int64, values []int64) (*Tensor, error) {
	return NewTensor(Int64, dims, asBytes(values))
}

// NewStrings makes a string tensor of shape dims (byte strings, any bytes).
func NewStrings(dims []int64, values []string) (*Tensor, error) {
	var cs cstrings
	defer cs.free()
	lengths := make([]C.size_t, len(values))
	for i, v := range values {
		lengths[i] = C.size_t(len(v))
	}
	var lp *C.size_t
	if len(lengths) > 0 {
		lp = &lengths[0]
	}
	arr := cs.array(values)
	var out *C.px_tensor
	err := call(func(s *C.px_status) C.px_code {
		return C.px_tensor_create_strings(dimsPtr(dims), C.int(len(dims)), arr, lp, C.size_t(len(values)), &out, s)
	})
	if err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// DType is the tensor's element type.
func (t *Tensor) DType() DType { return DType(C.px_tensor_dtype(t.c)) }

// Shape is the tensor's dimensions.
func (t *Tensor) Shape() []int64 {
	n := int(C.px_tensor_ndim(t.c))
	dims := make([]int64, n)
	for i := range dims {
		dims[i] = int64(C.px_tensor_dim(t.c, C.int(i)))
	}
	return dims
}

// NumElements is the product of the dimensions.
func (t *Tensor) NumElements() int64 { return int64(C.px_tensor_num_elements(t.c)) }

// Device is the device whose memory holds the tensor ("" for host memory).
func (t *Tensor) Device() string { return C.GoString(C.px_tensor_device_name(t.c)) }

// ToHost copies a tensor to host memory (a device tensor must be copied
// before its values can be read).
func (t *Tensor) ToHost() (*Tensor, error) {
	var out *C.px_tensor
	if err := call(func(s *C.px_status) C.px_code { return C.px_tensor_copy_to_host(t.c, &out, s) }); err != nil {
		return nil, err
	}
	return wrapTensor(out), nil
}

// Bytes copies the tensor's element buffer (host tensors of fixed-size types).
func (t *Tensor) Bytes() ([]byte, error) {
	if t.DType() == String {
		return nil, fmt.Errorf("plexus: Bytes of a string tensor; use Strings")
	}
	if C.px_tensor_is_host_readable(t.c) == 0 {
		return nil, fmt.Errorf("plexus: the tensor is on device %s; copy it with ToHost first", t.Device())
	}
	n := int(C.px_tensor_byte_size(t.c))
	if n == 0 {
		return []byte{}, nil
	}
	p := C.px_tensor_data(t.c)
	if p == nil {
		return nil, &Error{Code: ResourceExhausted, Message: "px_tensor_data returned NULL"}
	}
	out := C.GoBytes(p, C.int(n))
	runtime.KeepAlive(t)
	return out, nil
}

func values[T any](t *Tensor, want DType) ([]T, error) {
	if t.DType() != want {
		return nil, fmt.Errorf("plexus: the tensor holds %s, not %s", t.DType(), want)
	}
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	var zero T
	out := make([]T, len(b)/int(unsafe.Sizeof(zero)))
	copy(asBytes(out), b)
	return out, nil
}

// Float32s copies a float tensor's values.
func (t *Tensor) Float32s() ([]float32, error) { return values[float32](t, Float) }

// Float64s copies a double tensor's values.
func (t *Tensor) Float64s() ([]float64, error) { return values[float64](t, Double) }

// Int32s copies an int32 tensor's values.
func (t *Tensor) Int32s() ([]int32, error) { return values[int32](t, Int32) }

// Int64s copies an int64 tensor's values.
func (t *Tensor) Int64s() ([]int64, error) { return values[int64](t, Int64) }

// Strings copies a string tensor's elements.
func (t *Tensor) Strings() ([]string, error) {
	n := t.NumElements()
	out := make([]string, n)
	for i := int64(0); i < n; i++ {
		var data *C.char
		var length C.size_t
		err := call(func(s *C.px_status) C.px_code {
			return C.px_tensor_string(t.c, C.int64_t(i), &data, &length, s)
		})
		if err != nil {
			return nil, err
		}
		out[i] = C.GoStringN(data, C.int(length))
	}
	runtime.KeepAlive(t)
	return out, nil
}

// handles gathers the C handles of tensors for a call (C memory is not
// needed: the array holds C pointers only).
func handles(ts []*Tensor) []*C.px_tensor {
	out := make([]*C.px_tensor, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = t.c
		}
	}
	return out
}

func firstTensor(hs []*C.px_tensor) **C.px_tensor {
	if len(hs) == 0 {
		return nil
	}
	return &hs[0]
}

// wrapAll wraps the tensors a call returned.
func wrapAll(out []*C.px_tensor) []*Tensor {
	result := make([]*Tensor, len(out))
	for i, c := range out {
		result[i] = wrapTensor(c)
	}
	return result
}
