//! The C API's declarations (plexus/c_api.h, c_api_build.h, c_api_eager.h),
//! written by hand: the crate has no dependencies.
#![allow(non_camel_case_types, dead_code)]

use std::os::raw::{c_char, c_int, c_void};

pub type px_code = c_int;
pub type px_dtype = i32;

#[repr(C)]
pub struct px_status {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_tensor {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_runtime {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_graph {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_session {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_saved_model {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_attrs {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_operation {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_buffer {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_eager_context {
    _private: [u8; 0],
}

#[repr(C)]
pub struct px_runtime_options {
    pub struct_size: usize,
    pub discover_plugins: c_int,
    pub synchronous_debug: c_int,
}

#[repr(C)]
pub struct px_device_info {
    pub struct_size: usize,
    pub name: *const c_char,
    pub type_: *const c_char,
    pub description: *const c_char,
    pub vendor: *const c_char,
    pub plugin_name: *const c_char,
    pub total_memory_bytes: u64,
    pub free_memory_bytes: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct px_output {
    pub operation: *mut px_operation,
    pub index: c_int,
}

#[repr(C)]
pub struct px_operation_spec {
    pub struct_size: usize,
    pub op_type: *const c_char,
    pub name: *const c_char,
    pub inputs: *const px_output,
    pub num_inputs: usize,
    pub control_inputs: *const *mut px_operation,
    pub num_control_inputs: usize,
    pub attrs: *const px_attrs,
    pub device: *const c_char,
}

#[repr(C)]
pub struct px_eager_options {
    pub struct_size: usize,
    pub device: *const c_char,
}

#[repr(C)]
pub struct px_signature_tensor_info {
    pub struct_size: usize,
    pub key: *const c_char,
    pub tensor_name: *const c_char,
    pub dtype: px_dtype,
    pub is_ref: c_int,
    pub ndim: c_int,
    pub dims: *const i64,
}

#[repr(C)]
pub struct px_callable {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_run_metadata {
    _private: [u8; 0],
}
#[repr(C)]
pub struct px_cancel_token {
    _private: [u8; 0],
}

#[repr(C)]
pub struct px_session_options {
    pub struct_size: usize,
    pub device: *const c_char,
    pub optimizer: c_int,
    pub disabled_passes: *const c_char,
    pub inter_op_parallelism: c_int,
    pub intra_op_threads: i32,
    pub device_graphs: c_int,
    pub memory_plan: c_int,
    pub fetch_to_host: c_int,
    pub trace: c_int,
    pub placement: c_int,
    pub max_shape_specializations: i32,
}

#[repr(C)]
pub struct px_run_options {
    pub struct_size: usize,
    pub timeout_seconds: f64,
    pub cancel: *mut px_cancel_token,
    pub metadata: *mut px_run_metadata,
    pub trace_path: *const c_char,
}

pub const PX_PLACEMENT_STRICT: c_int = 1;
pub const PX_GRAPH_FORMAT_AUTO: c_int = 0;

#[link(name = "plexus_c")]
extern "C" {
    pub fn px_status_create() -> *mut px_status;
    pub fn px_status_destroy(status: *mut px_status);
    pub fn px_status_message(status: *const px_status) -> *const c_char;

    pub fn px_dtype_name(dtype: px_dtype) -> *const c_char;
    pub fn px_dtype_size(dtype: px_dtype) -> usize;

    pub fn px_tensor_create_from_data(dtype: px_dtype, dims: *const i64, ndim: c_int, data: *const c_void,
                                      byte_size: usize, out: *mut *mut px_tensor, status: *mut px_status) -> px_code;
    pub fn px_tensor_create_strings(dims: *const i64, ndim: c_int, strings: *const *const c_char,
                                    lengths: *const usize, num: usize, out: *mut *mut px_tensor,
                                    status: *mut px_status) -> px_code;
    pub fn px_tensor_destroy(tensor: *mut px_tensor);
    pub fn px_tensor_dtype(tensor: *const px_tensor) -> px_dtype;
    pub fn px_tensor_ndim(tensor: *const px_tensor) -> c_int;
    pub fn px_tensor_dim(tensor: *const px_tensor, i: c_int) -> i64;
    pub fn px_tensor_num_elements(tensor: *const px_tensor) -> i64;
    pub fn px_tensor_byte_size(tensor: *const px_tensor) -> usize;
    pub fn px_tensor_data(tensor: *mut px_tensor) -> *mut c_void;
    pub fn px_tensor_string(tensor: *const px_tensor, index: i64, out_data: *mut *const c_char,
                            out_length: *mut usize, status: *mut px_status) -> px_code;
    pub fn px_tensor_device_name(tensor: *const px_tensor) -> *const c_char;
    pub fn px_tensor_is_host_readable(tensor: *const px_tensor) -> c_int;
    pub fn px_tensor_copy_to_host(tensor: *const px_tensor, out: *mut *mut px_tensor,
                                  status: *mut px_status) -> px_code;

    pub fn px_runtime_create(options: *const px_runtime_options, out: *mut *mut px_runtime,
                             status: *mut px_status) -> px_code;
    pub fn px_runtime_destroy(runtime: *mut px_runtime);
    pub fn px_runtime_load_plugin(runtime: *mut px_runtime, path: *const c_char, status: *mut px_status)
                                  -> px_code;
    pub fn px_runtime_num_devices(runtime: *const px_runtime) -> usize;
    pub fn px_runtime_device_info(runtime: *const px_runtime, index: usize, out: *mut px_device_info,
                                  status: *mut px_status) -> px_code;

    pub fn px_graph_import(data: *const c_void, size: usize, format: c_int, out: *mut *mut px_graph,
                           status: *mut px_status) -> px_code;
    pub fn px_graph_import_file(path: *const c_char, out: *mut *mut px_graph, status: *mut px_status) -> px_code;
    pub fn px_graph_create(out: *mut *mut px_graph, status: *mut px_status) -> px_code;
    pub fn px_graph_destroy(graph: *mut px_graph);
    pub fn px_graph_add_operation(graph: *mut px_graph, spec: *const px_operation_spec,
                                  out: *mut *mut px_operation, status: *mut px_status) -> px_code;
    pub fn px_graph_finish(graph: *mut px_graph, status: *mut px_status) -> px_code;
    pub fn px_graph_to_graphdef(graph: *mut px_graph, out: *mut *mut px_buffer, status: *mut px_status) -> px_code;
    pub fn px_graph_num_operations(graph: *const px_graph) -> usize;
    pub fn px_graph_operation_by_name(graph: *const px_graph, name: *const c_char) -> *mut px_operation;
    pub fn px_graph_gradients(graph: *const px_graph, ys: *const *const c_char, num_ys: usize,
                              xs: *const *const c_char, num_xs: usize, grad_ys: *const *const c_char,
                              out: *mut *mut px_graph, status: *mut px_status) -> px_code;
    pub fn px_graph_gradient_name(graph: *const px_graph, j: usize) -> *const c_char;

    pub fn px_buffer_data(buffer: *const px_buffer) -> *const c_void;
    pub fn px_buffer_size(buffer: *const px_buffer) -> usize;
    pub fn px_buffer_destroy(buffer: *mut px_buffer);

    pub fn px_attrs_create(out: *mut *mut px_attrs, status: *mut px_status) -> px_code;
    pub fn px_attrs_destroy(attrs: *mut px_attrs);
    pub fn px_attrs_set_int(a: *mut px_attrs, name: *const c_char, v: i64, s: *mut px_status) -> px_code;
    pub fn px_attrs_set_float(a: *mut px_attrs, name: *const c_char, v: f32, s: *mut px_status) -> px_code;
    pub fn px_attrs_set_bool(a: *mut px_attrs, name: *const c_char, v: c_int, s: *mut px_status) -> px_code;
    pub fn px_attrs_set_type(a: *mut px_attrs, name: *const c_char, v: px_dtype, s: *mut px_status) -> px_code;
    pub fn px_attrs_set_string(a: *mut px_attrs, name: *const c_char, v: *const c_void, len: usize,
                               s: *mut px_status) -> px_code;
    pub fn px_attrs_set_shape(a: *mut px_attrs, name: *const c_char, dims: *const i64, ndim: c_int,
                              s: *mut px_status) -> px_code;
    pub fn px_attrs_set_tensor(a: *mut px_attrs, name: *const c_char, v: *const px_tensor,
                               s: *mut px_status) -> px_code;
    pub fn px_attrs_set_int_list(a: *mut px_attrs, name: *const c_char, v: *const i64, n: usize,
                                 s: *mut px_status) -> px_code;
    pub fn px_attrs_set_float_list(a: *mut px_attrs, name: *const c_char, v: *const f32, n: usize,
                                   s: *mut px_status) -> px_code;
    pub fn px_attrs_set_type_list(a: *mut px_attrs, name: *const c_char, v: *const px_dtype, n: usize,
                                  s: *mut px_status) -> px_code;

    pub fn px_operation_name(op: *const px_operation) -> *const c_char;
    pub fn px_operation_op_type(op: *const px_operation) -> *const c_char;
    pub fn px_operation_num_inputs(op: *const px_operation) -> c_int;
    pub fn px_operation_input(op: *const px_operation, i: c_int) -> px_output;
    pub fn px_operation_num_outputs(op: *const px_operation) -> c_int;
    pub fn px_operation_output_dtype(op: *const px_operation, i: c_int) -> px_dtype;
    pub fn px_operation_output_shape(op: *const px_operation, i: c_int, ndim: *mut c_int, dims: *mut *const i64,
                                     s: *mut px_status) -> px_code;
    pub fn px_operation_attr_int(op: *const px_operation, name: *const c_char, v: *mut i64,
                                 s: *mut px_status) -> px_code;
    pub fn px_operation_attr_type(op: *const px_operation, name: *const c_char, v: *mut px_dtype,
                                  s: *mut px_status) -> px_code;

    pub fn px_session_create(runtime: *mut px_runtime, graph: *const px_graph, device: *const c_char,
                             out: *mut *mut px_session, status: *mut px_status) -> px_code;
    pub fn px_session_destroy(session: *mut px_session);
    pub fn px_session_device_name(session: *const px_session) -> *const c_char;
    pub fn px_session_run(session: *mut px_session, feed_names: *const *const c_char,
                          feed_values: *const *const px_tensor, num_feeds: usize,
                          fetch_names: *const *const c_char, num_fetches: usize,
                          target_names: *const *const c_char, num_targets: usize,
                          out_fetches: *mut *mut px_tensor, status: *mut px_status) -> px_code;

    pub fn px_eager_context_create(runtime: *mut px_runtime, options: *const px_eager_options,
                                   out: *mut *mut px_eager_context, status: *mut px_status) -> px_code;
    pub fn px_eager_context_destroy(context: *mut px_eager_context);
    pub fn px_eager_execute(context: *mut px_eager_context, op_type: *const c_char,
                            inputs: *const *const px_tensor, num_inputs: usize, attrs: *const px_attrs,
                            device: *const c_char, out: *mut *mut px_tensor, max_outputs: usize,
                            num_outputs: *mut usize, status: *mut px_status) -> px_code;
    pub fn px_eager_num_outputs(context: *mut px_eager_context, op_type: *const c_char,
                                dtypes: *const px_dtype, num_inputs: usize, attrs: *const px_attrs,
                                device: *const c_char, num_outputs: *mut usize, status: *mut px_status) -> px_code;

    pub fn px_session_create_with_options(runtime: *mut px_runtime, graph: *const px_graph,
                                          options: *const px_session_options, out: *mut *mut px_session,
                                          status: *mut px_status) -> px_code;
    pub fn px_session_make_callable(session: *mut px_session, feeds: *const *const c_char, num_feeds: usize,
                                    fetches: *const *const c_char, num_fetches: usize,
                                    targets: *const *const c_char, num_targets: usize,
                                    out: *mut *mut px_callable, status: *mut px_status) -> px_code;
    pub fn px_callable_destroy(callable: *mut px_callable);
    pub fn px_callable_num_fetches(callable: *const px_callable) -> usize;
    pub fn px_callable_run(callable: *mut px_callable, options: *const px_run_options,
                           feed_values: *const *const px_tensor, out: *mut *mut px_tensor,
                           status: *mut px_status) -> px_code;
    pub fn px_run_metadata_create(out: *mut *mut px_run_metadata, status: *mut px_status) -> px_code;
    pub fn px_run_metadata_destroy(metadata: *mut px_run_metadata);
    pub fn px_run_metadata_num_nodes(metadata: *const px_run_metadata) -> usize;
    pub fn px_run_metadata_built_executor(metadata: *const px_run_metadata) -> c_int;
    pub fn px_checkpoint_write(prefix: *const c_char, keys: *const *const c_char, values: *const *const px_tensor,
                               count: usize, status: *mut px_status) -> px_code;
    pub fn px_checkpoint_read(prefix: *const c_char, key: *const c_char, out: *mut *mut px_tensor,
                              status: *mut px_status) -> px_code;

    pub fn px_saved_model_load(runtime: *mut px_runtime, dir: *const c_char, tags: *const *const c_char,
                               num_tags: usize, device: *const c_char, out: *mut *mut px_saved_model,
                               status: *mut px_status) -> px_code;
    pub fn px_saved_model_destroy(model: *mut px_saved_model);
    pub fn px_saved_model_num_signatures(model: *const px_saved_model) -> usize;
    pub fn px_saved_model_signature_key(model: *const px_saved_model, index: usize, out: *mut *const c_char,
                                        status: *mut px_status) -> px_code;
    pub fn px_saved_model_signature_arity(model: *const px_saved_model, key: *const c_char,
                                          num_inputs: *mut usize, num_outputs: *mut usize,
                                          status: *mut px_status) -> px_code;
    pub fn px_saved_model_signature_input(model: *const px_saved_model, key: *const c_char, index: usize,
                                          info: *mut px_signature_tensor_info, status: *mut px_status) -> px_code;
    pub fn px_saved_model_signature_output(model: *const px_saved_model, key: *const c_char, index: usize,
                                           info: *mut px_signature_tensor_info, status: *mut px_status) -> px_code;
    pub fn px_saved_model_run(model: *mut px_saved_model, key: *const c_char, input_keys: *const *const c_char,
                              input_values: *const *const px_tensor, num_inputs: usize,
                              output_keys: *const *const c_char, num_outputs: usize,
                              out_outputs: *mut *mut px_tensor, status: *mut px_status) -> px_code;
}
