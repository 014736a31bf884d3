//! Graphs (px_graph): imported from TensorFlow, or built operation by
//! operation, and read back.
use crate::attrs::CAttrs;
use crate::{call, ffi, ptr_or_null, string_of, Attr, CStrings, DType, Result};
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};

/// A shape: None for an unknown rank, -1 for an unknown dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub dims: Option<Vec<i64>>,
}

impl Shape {
    pub fn known(dims: &[i64]) -> Shape {
        Shape { dims: Some(dims.to_vec()) }
    }
    pub fn unknown() -> Shape {
        Shape { dims: None }
    }
}

pub struct Graph {
    pub(crate) c: *mut ffi::px_graph,
}

unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        unsafe { ffi::px_graph_destroy(self.c) }
    }
}

/// An operation of a graph, valid while the graph is.
#[derive(Clone, Copy)]
pub struct Operation<'g> {
    c: *mut ffi::px_operation,
    _graph: PhantomData<&'g Graph>,
}

/// Output `index` of an operation.
#[derive(Clone, Copy)]
pub struct Output<'g> {
    pub op: Operation<'g>,
    pub index: i32,
}

/// An operation to add.
#[derive(Default)]
pub struct OpSpec<'a, 'g> {
    pub op_type: &'a str,
    /// "": the op type, made unique.
    pub name: &'a str,
    pub inputs: Vec<Output<'g>>,
    pub control_inputs: Vec<Operation<'g>>,
    pub attrs: Vec<(&'a str, Attr<'a>)>,
    pub device: &'a str,
}

impl Graph {
    /// An empty graph to build.
    pub fn new() -> Result<Graph> {
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_graph_create(&mut out, s) })?;
        Ok(Graph { c: out })
    }

    /// Imports a TensorFlow GraphDef (binary, else text).
    pub fn import(bytes: &[u8]) -> Result<Graph> {
        let mut out = std::ptr::null_mut();
        call(|s| unsafe {
            ffi::px_graph_import(ptr_or_null(bytes) as *const c_void, bytes.len(), ffi::PX_GRAPH_FORMAT_AUTO,
                                 &mut out, s)
        })?;
        Ok(Graph { c: out })
    }

    /// Imports a GraphDef file (.pb, or .pbtxt text).
    pub fn import_file(path: &str) -> Result<Graph> {
        let mut cs = CStrings::default();
        let p = cs.add(path)?;
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_graph_import_file(p, &mut out, s) })?;
        Ok(Graph { c: out })
    }

    /// Adds an operation, checked at once; an error leaves the graph unchanged.
    pub fn add_operation<'g>(&'g self, spec: OpSpec<'_, 'g>) -> Result<Operation<'g>> {
        let mut cs = CStrings::default();
        let attrs = CAttrs::new(&spec.attrs)?;
        let inputs: Vec<ffi::px_output> =
            spec.inputs.iter().map(|o| ffi::px_output { operation: o.op.c, index: o.index as c_int }).collect();
        let controls: Vec<*mut ffi::px_operation> = spec.control_inputs.iter().map(|o| o.c).collect();
        let c = ffi::px_operation_spec {
            struct_size: std::mem::size_of::<ffi::px_operation_spec>(),
            op_type: cs.add(spec.op_type)?,
            name: cs.optional(spec.name)?,
            inputs: ptr_or_null(&inputs),
            num_inputs: inputs.len(),
            control_inputs: ptr_or_null(&controls),
            num_control_inputs: controls.len(),
            attrs: attrs.0,
            device: cs.optional(spec.device)?,
        };
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_graph_add_operation(self.c, &c, &mut out, s) })?;
        Ok(Operation { c: out, _graph: PhantomData })
    }

    /// Checks the whole graph as an imported GraphDef is checked.
    pub fn finish(&self) -> Result<()> {
        call(|s| unsafe { ffi::px_graph_finish(self.c, s) })
    }

    /// The graph as serialized TensorFlow GraphDef bytes.
    pub fn to_graph_def(&self) -> Result<Vec<u8>> {
        let mut buf = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_graph_to_graphdef(self.c, &mut buf, s) })?;
        let bytes = unsafe {
            std::slice::from_raw_parts(ffi::px_buffer_data(buf) as *const u8, ffi::px_buffer_size(buf)).to_vec()
        };
        unsafe { ffi::px_buffer_destroy(buf) };
        Ok(bytes)
    }

    pub fn num_operations(&self) -> usize {
        unsafe { ffi::px_graph_num_operations(self.c) }
    }

    /// The operation named `name`.
    pub fn operation(&self, name: &str) -> Option<Operation<'_>> {
        let mut cs = CStrings::default();
        let n = cs.add(name).ok()?;
        let c = unsafe { ffi::px_graph_operation_by_name(self.c, n) };
        if c.is_null() {
            None
        } else {
            Some(Operation { c, _graph: PhantomData })
        }
    }

    /// A new graph holding this one and the gradients of sum(ys) with
    /// respect to xs (tensor names), with the name of each gradient (None
    /// when ys do not depend on that x).
    pub fn gradients(&self, ys: &[&str], xs: &[&str]) -> Result<(Graph, Vec<Option<String>>)> {
        let mut cs = CStrings::default();
        let yp = cs.array(ys)?;
        let xp = cs.array(xs)?;
        let mut out = std::ptr::null_mut();
        call(|s| unsafe {
            ffi::px_graph_gradients(self.c, ptr_or_null(&yp), yp.len(), ptr_or_null(&xp), xp.len(),
                                    std::ptr::null(), &mut out, s)
        })?;
        let g = Graph { c: out };
        let names = (0..xs.len())
            .map(|j| {
                let p = unsafe { ffi::px_graph_gradient_name(g.c, j) };
                if p.is_null() { None } else { Some(string_of(p)) }
            })
            .collect();
        Ok((g, names))
    }
}

impl<'g> Operation<'g> {
    pub fn output(self, index: i32) -> Output<'g> {
        Output { op: self, index }
    }
    pub fn name(&self) -> String {
        string_of(unsafe { ffi::px_operation_name(self.c) })
    }
    pub fn op_type(&self) -> String {
        string_of(unsafe { ffi::px_operation_op_type(self.c) })
    }
    pub fn num_inputs(&self) -> usize {
        unsafe { ffi::px_operation_num_inputs(self.c) as usize }
    }
    /// Data input i: the output it reads.
    pub fn input(&self, i: usize) -> Option<Output<'g>> {
        let o = unsafe { ffi::px_operation_input(self.c, i as c_int) };
        if o.operation.is_null() {
            None
        } else {
            Some(Output { op: Operation { c: o.operation, _graph: PhantomData }, index: o.index })
        }
    }
    pub fn num_outputs(&self) -> usize {
        unsafe { ffi::px_operation_num_outputs(self.c) as usize }
    }
    pub fn output_dtype(&self, i: usize) -> DType {
        DType(unsafe { ffi::px_operation_output_dtype(self.c, i as c_int) })
    }
    /// The inferred shape of output i.
    pub fn output_shape(&self, i: usize) -> Result<Shape> {
        let mut ndim: c_int = 0;
        let mut dims: *const i64 = std::ptr::null();
        call(|s| unsafe { ffi::px_operation_output_shape(self.c, i as c_int, &mut ndim, &mut dims, s) })?;
        if ndim < 0 {
            return Ok(Shape::unknown());
        }
        let v = if ndim == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(dims, ndim as usize) }.to_vec() };
        Ok(Shape { dims: Some(v) })
    }
    pub fn attr_int(&self, name: &str) -> Result<i64> {
        let mut cs = CStrings::default();
        let n = cs.add(name)?;
        let mut v = 0i64;
        call(|s| unsafe { ffi::px_operation_attr_int(self.c, n, &mut v, s) })?;
        Ok(v)
    }
    pub fn attr_type(&self, name: &str) -> Result<DType> {
        let mut cs = CStrings::default();
        let n = cs.add(name)?;
        let mut v = 0i32;
        call(|s| unsafe { ffi::px_operation_attr_type(self.c, n, &mut v, s) })?;
        Ok(DType(v))
    }
}
