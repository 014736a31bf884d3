//! Attribute values (px_attrs) for building operations and eager calls.
use crate::{call, ffi, ptr_or_null, CStrings, DType, Result, Shape, Tensor};
use std::os::raw::{c_int, c_void};

/// One attribute value.
pub enum Attr<'a> {
    Int(i64),
    Float(f32),
    Bool(bool),
    Type(DType),
    Str(&'a [u8]),
    Shape(Shape),
    Tensor(&'a Tensor),
    IntList(Vec<i64>),
    FloatList(Vec<f32>),
    TypeList(Vec<DType>),
}

/// Attribute values by name, in the order given.
pub type Attrs<'a> = Vec<(&'a str, Attr<'a>)>;

/// A px_attrs built from attrs, freed on drop (null when there are none).
pub(crate) struct CAttrs(pub(crate) *mut ffi::px_attrs);

impl Drop for CAttrs {
    fn drop(&mut self) {
        unsafe { ffi::px_attrs_destroy(self.0) }
    }
}

impl CAttrs {
    pub(crate) fn new(attrs: &[(&str, Attr<'_>)]) -> Result<CAttrs> {
        if attrs.is_empty() {
            return Ok(CAttrs(std::ptr::null_mut()));
        }
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_attrs_create(&mut out, s) })?;
        let c = CAttrs(out);
        for (name, value) in attrs {
            let mut cs = CStrings::default();
            let n = cs.add(name)?;
            let a = c.0;
            call(|s| unsafe {
                match value {
                    Attr::Int(v) => ffi::px_attrs_set_int(a, n, *v, s),
                    Attr::Float(v) => ffi::px_attrs_set_float(a, n, *v, s),
                    Attr::Bool(v) => ffi::px_attrs_set_bool(a, n, *v as c_int, s),
                    Attr::Type(v) => ffi::px_attrs_set_type(a, n, v.0, s),
                    Attr::Str(v) => ffi::px_attrs_set_string(a, n, v.as_ptr() as *const c_void, v.len(), s),
                    Attr::Shape(v) => match &v.dims {
                        None => ffi::px_attrs_set_shape(a, n, std::ptr::null(), -1, s),
                        Some(d) => ffi::px_attrs_set_shape(a, n, ptr_or_null(d), d.len() as c_int, s),
                    },
                    Attr::Tensor(t) => ffi::px_attrs_set_tensor(a, n, t.c, s),
                    Attr::IntList(v) => ffi::px_attrs_set_int_list(a, n, ptr_or_null(v), v.len(), s),
                    Attr::FloatList(v) => ffi::px_attrs_set_float_list(a, n, ptr_or_null(v), v.len(), s),
                    Attr::TypeList(v) => {
                        let types: Vec<i32> = v.iter().map(|t| t.0).collect();
                        ffi::px_attrs_set_type_list(a, n, ptr_or_null(&types), types.len(), s)
                    }
                }
            })?;
        }
        Ok(c)
    }
}
