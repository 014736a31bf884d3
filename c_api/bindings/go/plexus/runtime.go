package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import "runtime"

// Runtime holds the loaded plugins and their devices (px_runtime). Close
// it after every session, model and eager context made from it.
type Runtime struct {
	c *C.px_runtime
}

// Device describes one device of a runtime.
type Device struct {
	Name, Type, Description, Vendor, Plugin string
	TotalMemory, FreeMemory                 uint64
}

// NewRuntime makes a runtime; with discover, it loads every plugin in
// PLEXUS_PLUGIN_PATH and beside the library.
func NewRuntime(discover bool) (*Runtime, error) {
	opts := C.px_runtime_options{struct_size: C.size_t(C.sizeof_px_runtime_options)}
	if discover {
		opts.discover_plugins = 1
	}
	var out *C.px_runtime
	if err := call(func(s *C.px_status) C.px_code { return C.px_runtime_create(&opts, &out, s) }); err != nil {
		return nil, err
	}
	r := &Runtime{out}
	runtime.SetFinalizer(r, (*Runtime).Close)
	return r, nil
}

// Close destroys the runtime; later calls do nothing.
func (r *Runtime) Close() {
	if r != nil && r.c != nil {
		C.px_runtime_destroy(r.c)
		r.c = nil
	}
}

// LoadPlugin loads a plugin file; a refusal says why.
func (r *Runtime) LoadPlugin(path string) error {
	var cs cstrings
	defer cs.free()
	p := cs.add(path)
	return call(func(s *C.px_status) C.px_code { return C.px_runtime_load_plugin(r.c, p, s) })
}

// Devices lists the runtime's devices.
func (r *Runtime) Devices() ([]Device, error) {
	n := int(C.px_runtime_num_devices(r.c))
	out := make([]Device, 0, n)
	for i := 0; i < n; i++ {
		info := C.px_device_info{struct_size: C.size_t(C.sizeof_px_device_info)}
		if err := call(func(s *C.px_status) C.px_code {
			return C.px_runtime_device_info(r.c, C.size_t(i), &info, s)
		}); err != nil {
			return nil, err
		}
		out = append(out, Device{
			Name: C.GoString(info.name), Type: C.GoString(info._type), Description: C.GoString(info.description),
			Vendor: C.GoString(info.vendor), Plugin: C.GoString(info.plugin_name),
			TotalMemory: uint64(info.total_memory_bytes), FreeMemory: uint64(info.free_memory_bytes),
		})
	}
	runtime.KeepAlive(r)
	return out, nil
}
