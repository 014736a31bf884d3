//! Session options, callables with run reports, and checkpoints.
use crate::{call, ffi, ptr_or_null, CStrings, Graph, Result, Runtime, Session, Tensor};
use std::os::raw::c_int;
use std::time::Duration;

/// px_session_options; `Default` is the defaults.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    pub device: String,
    pub disable_optimizer: bool,
    pub disabled_passes: Vec<String>,
    pub intra_op_threads: i32,
    pub device_graphs: bool,
    pub keep_fetches_on_device: bool,
    pub trace: bool,
    pub strict_placement: bool,
}

fn flag(set: bool, value: c_int) -> c_int {
    if set {
        value
    } else {
        -1
    }
}

impl Session {
    /// A session with options.
    pub fn with_options(runtime: &Runtime, graph: &Graph, o: &SessionOptions) -> Result<Session> {
        let mut cs = CStrings::default();
        let c = ffi::px_session_options {
            struct_size: std::mem::size_of::<ffi::px_session_options>(),
            device: cs.optional(&o.device)?,
            optimizer: flag(o.disable_optimizer, 0),
            disabled_passes: cs.optional(&o.disabled_passes.join(","))?,
            inter_op_parallelism: -1,
            intra_op_threads: o.intra_op_threads,
            device_graphs: flag(o.device_graphs, 1),
            memory_plan: -1,
            fetch_to_host: flag(o.keep_fetches_on_device, 0),
            trace: flag(o.trace, 1),
            placement: flag(o.strict_placement, ffi::PX_PLACEMENT_STRICT),
            max_shape_specializations: -1,
        };
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_session_create_with_options(runtime.c(), graph.c, &c, &mut out, s) })?;
        Ok(Session::from_raw(out, runtime))
    }

    /// One feed/fetch signature, checked now.
    pub fn callable(&self, feeds: &[&str], fetches: &[&str], targets: &[&str]) -> Result<Callable> {
        let mut cs = CStrings::default();
        let (f, g, t) = (cs.array(feeds)?, cs.array(fetches)?, cs.array(targets)?);
        let mut out = std::ptr::null_mut();
        call(|s| unsafe {
            ffi::px_session_make_callable(self.c, ptr_or_null(&f), f.len(), ptr_or_null(&g), g.len(), ptr_or_null(&t),
                                          t.len(), &mut out, s)
        })?;
        Ok(Callable { c: out })
    }
}

/// What a run reports.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub num_nodes: usize,
    pub built_executor: bool,
}

/// A prepared signature of a session; keeps the session alive.
pub struct Callable {
    c: *mut ffi::px_callable,
}
unsafe impl Send for Callable {}
unsafe impl Sync for Callable {}
impl Drop for Callable {
    fn drop(&mut self) {
        unsafe { ffi::px_callable_destroy(self.c) }
    }
}

impl Callable {
    /// Runs with feeds in order; a zero timeout is none. With `report`, the
    /// run's metadata is summarized there.
    pub fn run(&self, feeds: &[&Tensor], timeout: Duration, report: Option<&mut RunReport>) -> Result<Vec<Tensor>> {
        let mut md = std::ptr::null_mut();
        if report.is_some() {
            call(|s| unsafe { ffi::px_run_metadata_create(&mut md, s) })?;
        }
        struct Md(*mut ffi::px_run_metadata);
        impl Drop for Md {
            fn drop(&mut self) {
                unsafe { ffi::px_run_metadata_destroy(self.0) }
            }
        }
        let md = Md(md);
        let options = ffi::px_run_options {
            struct_size: std::mem::size_of::<ffi::px_run_options>(),
            timeout_seconds: timeout.as_secs_f64(),
            cancel: std::ptr::null_mut(),
            metadata: md.0,
            trace_path: std::ptr::null(),
        };
        let handles: Vec<*const ffi::px_tensor> = feeds.iter().map(|t| t.c as *const _).collect();
        let n = unsafe { ffi::px_callable_num_fetches(self.c) };
        let mut out = vec![std::ptr::null_mut(); n.max(1)];
        call(|s| unsafe { ffi::px_callable_run(self.c, &options, ptr_or_null(&handles), out.as_mut_ptr(), s) })?;
        out.truncate(n);
        if let Some(r) = report {
            r.num_nodes = unsafe { ffi::px_run_metadata_num_nodes(md.0) };
            r.built_executor = unsafe { ffi::px_run_metadata_built_executor(md.0) } != 0;
        }
        Ok(out.into_iter().map(Tensor::from_raw).collect())
    }
}

/// Writes a TensorFlow checkpoint of host tensors by key.
pub fn write_checkpoint(prefix: &str, values: &[(&str, &Tensor)]) -> Result<()> {
    let mut cs = CStrings::default();
    let p = cs.add(prefix)?;
    let keys: Vec<&str> = values.iter().map(|v| v.0).collect();
    let kp = cs.array(&keys)?;
    let handles: Vec<*const ffi::px_tensor> = values.iter().map(|v| v.1.c as *const _).collect();
    call(|s| unsafe { ffi::px_checkpoint_write(p, ptr_or_null(&kp), ptr_or_null(&handles), handles.len(), s) })
}

/// Reads tensor `key` of the checkpoint at `prefix`.
pub fn read_checkpoint(prefix: &str, key: &str) -> Result<Tensor> {
    let mut cs = CStrings::default();
    let (p, k) = (cs.add(prefix)?, cs.add(key)?);
    let mut out = std::ptr::null_mut();
    call(|s| unsafe { ffi::px_checkpoint_read(p, k, &mut out, s) })?;
    Ok(Tensor::from_raw(out))
}
