// Package plexus is a Go binding of the Plexus C API (c_api/include/plexus/c_api.h):
// runtimes and plugins, tensors, graphs built operation by operation or
// imported from TensorFlow, sessions, eager execution and SavedModels.
//
// Every object owns a C handle. Close releases it at once; a finalizer
// releases what was not closed. Errors are *Error values carrying the C
// API's code and message.
//
// Build: cgo finds the header through the #cgo line below and the library
// through CGO_LDFLAGS (-L<build>/lib); see c_api/bindings/README.md.
package plexus

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo LDFLAGS: -lplexus_c
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Code is a canonical status code (Abseil's numbers), as px_code.
type Code int

const (
	OK                 Code = C.PX_STATUS_OK
	Cancelled          Code = C.PX_STATUS_CANCELLED
	Unknown            Code = C.PX_STATUS_UNKNOWN
	InvalidArgument    Code = C.PX_STATUS_INVALID_ARGUMENT
	DeadlineExceeded   Code = C.PX_STATUS_DEADLINE_EXCEEDED
	NotFound           Code = C.PX_STATUS_NOT_FOUND
	AlreadyExists      Code = C.PX_STATUS_ALREADY_EXISTS
	PermissionDenied   Code = C.PX_STATUS_PERMISSION_DENIED
	ResourceExhausted  Code = C.PX_STATUS_RESOURCE_EXHAUSTED
	FailedPrecondition Code = C.PX_STATUS_FAILED_PRECONDITION
	Aborted            Code = C.PX_STATUS_ABORTED
	OutOfRange         Code = C.PX_STATUS_OUT_OF_RANGE
	Unimplemented      Code = C.PX_STATUS_UNIMPLEMENTED
	Internal           Code = C.PX_STATUS_INTERNAL
	Unavailable        Code = C.PX_STATUS_UNAVAILABLE
	DataLoss           Code = C.PX_STATUS_DATA_LOSS
)

// Error is a failed C API call: its code and message (which names the
// function and what was wrong).
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("plexus: %s (code %d)", e.Message, int(e.Code)) }

// status is a px_status for one call.
type status struct{ c *C.px_status }

func newStatus() status { return status{C.px_status_create()} }

func (s status) free() { C.px_status_destroy(s.c) }

// err turns the result of a call into an error (nil on success).
func (s status) err(code C.px_code) error {
	if code == C.PX_STATUS_OK {
		return nil
	}
	return &Error{Code: Code(code), Message: C.GoString(C.px_status_message(s.c))}
}

// call runs f with a fresh status and returns its error.
func call(f func(*C.px_status) C.px_code) error {
	s := newStatus()
	defer s.free()
	return s.err(f(s.c))
}

// cstrings holds C copies of Go strings for one call.
type cstrings struct{ ptrs []*C.char }

func (c *cstrings) add(s string) *C.char {
	p := C.CString(s)
	c.ptrs = append(c.ptrs, p)
	return p
}

// array copies strings into a C array (freed with the rest); nil when empty.
func (c *cstrings) array(values []string) **C.char {
	if len(values) == 0 {
		return nil
	}
	arr := (**C.char)(C.malloc(C.size_t(len(values)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	c.ptrs = append(c.ptrs, (*C.char)(unsafe.Pointer(arr)))
	s := unsafe.Slice(arr, len(values))
	for i, v := range values {
		s[i] = c.add(v)
	}
	return arr
}

func (c *cstrings) free() {
	for _, p := range c.ptrs {
		C.free(unsafe.Pointer(p))
	}
	c.ptrs = nil
}

// optional is a C string, or NULL for "".
func (c *cstrings) optional(s string) *C.char {
	if s == "" {
		return nil
	}
	return c.add(s)
}
