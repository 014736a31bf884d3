//! Runtimes, sessions, eager contexts and SavedModels.
use crate::attrs::CAttrs;
use crate::{call, error, ffi, ptr_or_null, string_of, Attr, CStrings, Code, DType, Graph, Result, Shape, Tensor};
use std::os::raw::c_int;
use std::sync::Arc;

struct RuntimeHandle(*mut ffi::px_runtime);
// The C API allows a runtime to be used from several threads at once.
unsafe impl Send for RuntimeHandle {}
unsafe impl Sync for RuntimeHandle {}
impl Drop for RuntimeHandle {
    fn drop(&mut self) {
        unsafe { ffi::px_runtime_destroy(self.0) }
    }
}

/// The loaded plugins and their devices (px_runtime). Cloning shares it;
/// the C runtime is destroyed after the last clone and the last session,
/// eager context and SavedModel made from it.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeHandle>,
}

/// One device of a runtime.
#[derive(Clone, Debug)]
pub struct Device {
    pub name: String,
    pub type_: String,
    pub description: String,
    pub plugin: String,
    pub total_memory: u64,
}

impl Runtime {
    /// With `discover`, loads every plugin in PLEXUS_PLUGIN_PATH and beside
    /// the library.
    pub fn new(discover: bool) -> Result<Runtime> {
        let options = ffi::px_runtime_options {
            struct_size: std::mem::size_of::<ffi::px_runtime_options>(),
            discover_plugins: discover as c_int,
            synchronous_debug: 0,
        };
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_runtime_create(&options, &mut out, s) })?;
        Ok(Runtime { inner: Arc::new(RuntimeHandle(out)) })
    }

    pub(crate) fn c(&self) -> *mut ffi::px_runtime {
        self.inner.0
    }

    /// Loads a plugin file; a refusal says why.
    pub fn load_plugin(&self, path: &str) -> Result<()> {
        let mut cs = CStrings::default();
        let p = cs.add(path)?;
        call(|s| unsafe { ffi::px_runtime_load_plugin(self.c(), p, s) })
    }

    pub fn devices(&self) -> Result<Vec<Device>> {
        let n = unsafe { ffi::px_runtime_num_devices(self.c()) };
        (0..n)
            .map(|i| {
                let mut info = ffi::px_device_info {
                    struct_size: std::mem::size_of::<ffi::px_device_info>(),
                    name: std::ptr::null(),
                    type_: std::ptr::null(),
                    description: std::ptr::null(),
                    vendor: std::ptr::null(),
                    plugin_name: std::ptr::null(),
                    total_memory_bytes: 0,
                    free_memory_bytes: 0,
                };
                call(|s| unsafe { ffi::px_runtime_device_info(self.c(), i, &mut info, s) })?;
                Ok(Device {
                    name: string_of(info.name),
                    type_: string_of(info.type_),
                    description: string_of(info.description),
                    plugin: string_of(info.plugin_name),
                    total_memory: info.total_memory_bytes,
                })
            })
            .collect()
    }
}

fn wrap_all(out: Vec<*mut ffi::px_tensor>) -> Vec<Tensor> {
    out.into_iter().map(Tensor::from_raw).collect()
}

/// Runs a graph on one device (px_session).
pub struct Session {
    pub(crate) c: *mut ffi::px_session,
    _runtime: Runtime,
}
// The C API allows a session to be run from several threads at once.
unsafe impl Send for Session {}
unsafe impl Sync for Session {}
impl Drop for Session {
    fn drop(&mut self) {
        unsafe { ffi::px_session_destroy(self.c) }
    }
}

impl Session {
    pub(crate) fn from_raw(c: *mut ffi::px_session, runtime: &Runtime) -> Session {
        Session { c, _runtime: runtime.clone() }
    }

    /// A session on `device` ("" for the best device present). It keeps what
    /// it needs of the graph.
    pub fn new(runtime: &Runtime, graph: &Graph, device: &str) -> Result<Session> {
        let mut cs = CStrings::default();
        let d = cs.optional(device)?;
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_session_create(runtime.c(), graph.c, d, &mut out, s) })?;
        Ok(Session { c: out, _runtime: runtime.clone() })
    }

    pub fn device(&self) -> String {
        string_of(unsafe { ffi::px_session_device_name(self.c) })
    }

    /// Feeds (tensor name, value), runs `targets` for their effects and
    /// returns the fetches in order, in host memory.
    pub fn run(&self, feeds: &[(&str, &Tensor)], fetches: &[&str], targets: &[&str]) -> Result<Vec<Tensor>> {
        let mut cs = CStrings::default();
        let names: Vec<&str> = feeds.iter().map(|f| f.0).collect();
        let np = cs.array(&names)?;
        let values: Vec<*const ffi::px_tensor> = feeds.iter().map(|f| f.1.c as *const _).collect();
        let fp = cs.array(fetches)?;
        let tp = cs.array(targets)?;
        let mut out = vec![std::ptr::null_mut(); fetches.len()];
        call(|s| unsafe {
            ffi::px_session_run(self.c, ptr_or_null(&np), ptr_or_null(&values), values.len(), ptr_or_null(&fp),
                                fp.len(), ptr_or_null(&tp), tp.len(), out.as_mut_ptr(), s)
        })?;
        Ok(wrap_all(out))
    }
}

/// Runs ops one at a time (px_eager_context), with the kernels and per-op
/// caches of Python's eager mode.
pub struct EagerContext {
    c: *mut ffi::px_eager_context,
    _runtime: Runtime,
}
unsafe impl Send for EagerContext {}
unsafe impl Sync for EagerContext {}
impl Drop for EagerContext {
    fn drop(&mut self) {
        unsafe { ffi::px_eager_context_destroy(self.c) }
    }
}

impl EagerContext {
    /// Ops run on `device` ("": where their first input is, else the host).
    pub fn new(runtime: &Runtime, device: &str) -> Result<EagerContext> {
        let mut cs = CStrings::default();
        let options = ffi::px_eager_options {
            struct_size: std::mem::size_of::<ffi::px_eager_options>(),
            device: cs.optional(device)?,
        };
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_eager_context_create(runtime.c(), &options, &mut out, s) })?;
        Ok(EagerContext { c: out, _runtime: runtime.clone() })
    }

    /// Runs `op` on `inputs` with `attrs` (type attributes and list lengths
    /// are inferred from the inputs when left out).
    pub fn execute(&self, op: &str, inputs: &[&Tensor], attrs: &[(&str, Attr<'_>)]) -> Result<Vec<Tensor>> {
        let mut cs = CStrings::default();
        let name = cs.add(op)?;
        let a = CAttrs::new(attrs)?;
        let handles: Vec<*const ffi::px_tensor> = inputs.iter().map(|t| t.c as *const _).collect();
        // Room for most ops; an op with more outputs fails with OUT_OF_RANGE
        // before anything runs, and the call is made again with room for all.
        let mut capacity = 8usize;
        loop {
            let mut out = vec![std::ptr::null_mut(); capacity];
            let mut got = 0usize;
            let result = call(|s| unsafe {
                ffi::px_eager_execute(self.c, name, ptr_or_null(&handles), handles.len(), a.0, std::ptr::null(),
                                      out.as_mut_ptr(), capacity, &mut got, s)
            });
            match result {
                Err(e) if e.code == Code::OUT_OF_RANGE => {
                    let dtypes: Vec<i32> = inputs.iter().map(|t| t.dtype().0).collect();
                    let mut n = 0usize;
                    call(|s| unsafe {
                        ffi::px_eager_num_outputs(self.c, name, ptr_or_null(&dtypes), dtypes.len(), a.0,
                                                  std::ptr::null(), &mut n, s)
                    })?;
                    if n <= capacity {
                        return Err(e);
                    }
                    capacity = n;
                }
                Err(e) => return Err(e),
                Ok(()) => {
                    out.truncate(got);
                    return Ok(wrap_all(out));
                }
            }
        }
    }
}

/// A signature input or output.
#[derive(Clone, Debug)]
pub struct TensorSpec {
    pub key: String,
    pub tensor_name: String,
    pub dtype: DType,
    pub shape: Shape,
}

/// A signature's inputs and outputs, in key order.
#[derive(Clone, Debug)]
pub struct Signature {
    pub key: String,
    pub inputs: Vec<TensorSpec>,
    pub outputs: Vec<TensorSpec>,
}

/// A loaded TensorFlow SavedModel (px_saved_model).
pub struct SavedModel {
    c: *mut ffi::px_saved_model,
    _runtime: Runtime,
}
unsafe impl Send for SavedModel {}
unsafe impl Sync for SavedModel {}
impl Drop for SavedModel {
    fn drop(&mut self) {
        unsafe { ffi::px_saved_model_destroy(self.c) }
    }
}

impl SavedModel {
    /// Loads the SavedModel in `dir` with `tags` (empty: {"serve"}) on
    /// `device` ("": the best device present).
    pub fn load(runtime: &Runtime, dir: &str, tags: &[&str], device: &str) -> Result<SavedModel> {
        let mut cs = CStrings::default();
        let d = cs.add(dir)?;
        let tp = cs.array(tags)?;
        let dev = cs.optional(device)?;
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_saved_model_load(runtime.c(), d, ptr_or_null(&tp), tp.len(), dev, &mut out, s) })?;
        Ok(SavedModel { c: out, _runtime: runtime.clone() })
    }

    fn spec(&self, key: *const std::os::raw::c_char, index: usize, input: bool) -> Result<TensorSpec> {
        let mut info = ffi::px_signature_tensor_info {
            struct_size: std::mem::size_of::<ffi::px_signature_tensor_info>(),
            key: std::ptr::null(),
            tensor_name: std::ptr::null(),
            dtype: 0,
            is_ref: 0,
            ndim: 0,
            dims: std::ptr::null(),
        };
        call(|s| unsafe {
            if input {
                ffi::px_saved_model_signature_input(self.c, key, index, &mut info, s)
            } else {
                ffi::px_saved_model_signature_output(self.c, key, index, &mut info, s)
            }
        })?;
        let shape = if info.ndim < 0 {
            Shape::unknown()
        } else if info.ndim == 0 {
            Shape::known(&[])
        } else {
            Shape::known(unsafe { std::slice::from_raw_parts(info.dims, info.ndim as usize) })
        };
        Ok(TensorSpec { key: string_of(info.key), tensor_name: string_of(info.tensor_name), dtype: DType(info.dtype), shape })
    }

    /// The signatures in key order.
    pub fn signatures(&self) -> Result<Vec<Signature>> {
        let n = unsafe { ffi::px_saved_model_num_signatures(self.c) };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut key = std::ptr::null();
            call(|s| unsafe { ffi::px_saved_model_signature_key(self.c, i, &mut key, s) })?;
            let (mut nin, mut nout) = (0usize, 0usize);
            call(|s| unsafe { ffi::px_saved_model_signature_arity(self.c, key, &mut nin, &mut nout, s) })?;
            let inputs = (0..nin).map(|j| self.spec(key, j, true)).collect::<Result<Vec<_>>>()?;
            let outputs = (0..nout).map(|j| self.spec(key, j, false)).collect::<Result<Vec<_>>>()?;
            out.push(Signature { key: string_of(key), inputs, outputs });
        }
        Ok(out)
    }

    /// Runs signature `key` with (input key, value) pairs; returns the
    /// outputs named, in order.
    pub fn run(&self, key: &str, inputs: &[(&str, &Tensor)], outputs: &[&str]) -> Result<Vec<Tensor>> {
        if outputs.iter().any(|o| o.is_empty()) {
            return Err(error(Code::INVALID_ARGUMENT, "an output key is empty"));
        }
        let mut cs = CStrings::default();
        let k = cs.add(key)?;
        let names: Vec<&str> = inputs.iter().map(|i| i.0).collect();
        let ip = cs.array(&names)?;
        let values: Vec<*const ffi::px_tensor> = inputs.iter().map(|i| i.1.c as *const _).collect();
        let op = cs.array(outputs)?;
        let mut out = vec![std::ptr::null_mut(); outputs.len()];
        call(|s| unsafe {
            ffi::px_saved_model_run(self.c, k, ptr_or_null(&ip), ptr_or_null(&values), values.len(),
                                    ptr_or_null(&op), op.len(), out.as_mut_ptr(), s)
        })?;
        Ok(wrap_all(out))
    }
}
