//! Tensors (px_tensor) and data types.
use crate::{call, error, ffi, ptr_or_null, string_of, Code, Result};
use std::os::raw::{c_char, c_int, c_void};

/// A TensorFlow DataType number (px_dtype).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DType(pub i32);

impl DType {
    pub const FLOAT: DType = DType(1);
    pub const DOUBLE: DType = DType(2);
    pub const INT32: DType = DType(3);
    pub const UINT8: DType = DType(4);
    pub const STRING: DType = DType(7);
    pub const INT64: DType = DType(9);
    pub const BOOL: DType = DType(10);

    /// The C API's name: "float", "int32", ...
    pub fn name(self) -> String {
        string_of(unsafe { ffi::px_dtype_name(self.0) })
    }

    /// Bytes per element; 0 for types without a fixed size.
    pub fn size(self) -> usize {
        unsafe { ffi::px_dtype_size(self.0) }
    }
}

/// Element types a tensor can be made from and read as.
pub trait Element: Copy + Default {
    const DTYPE: DType;
}
impl Element for f32 {
    const DTYPE: DType = DType::FLOAT;
}
impl Element for f64 {
    const DTYPE: DType = DType::DOUBLE;
}
impl Element for i32 {
    const DTYPE: DType = DType::INT32;
}
impl Element for i64 {
    const DTYPE: DType = DType::INT64;
}
impl Element for u8 {
    const DTYPE: DType = DType::UINT8;
}

/// A px_tensor: in host memory, or on a device for eager results.
pub struct Tensor {
    pub(crate) c: *mut ffi::px_tensor,
}

// The C API allows a tensor to be read from several threads and moved
// between them; it must not be written by two at once (&mut self).
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

impl Drop for Tensor {
    fn drop(&mut self) {
        unsafe { ffi::px_tensor_destroy(self.c) }
    }
}

impl Tensor {
    pub(crate) fn from_raw(c: *mut ffi::px_tensor) -> Tensor {
        Tensor { c }
    }

    /// A tensor of shape `dims` holding a copy of `values` (row-major).
    pub fn new<T: Element>(dims: &[i64], values: &[T]) -> Result<Tensor> {
        let mut out = std::ptr::null_mut();
        call(|s| unsafe {
            ffi::px_tensor_create_from_data(T::DTYPE.0, ptr_or_null(dims), dims.len() as c_int,
                                            ptr_or_null(values) as *const c_void,
                                            std::mem::size_of_val(values), &mut out, s)
        })?;
        Ok(Tensor::from_raw(out))
    }

    /// A scalar.
    pub fn scalar<T: Element>(value: T) -> Result<Tensor> {
        Tensor::new(&[], &[value])
    }

    /// A string tensor (byte strings: any bytes).
    pub fn strings<S: AsRef<[u8]>>(dims: &[i64], values: &[S]) -> Result<Tensor> {
        let ptrs: Vec<*const c_char> = values.iter().map(|v| v.as_ref().as_ptr() as *const c_char).collect();
        let lengths: Vec<usize> = values.iter().map(|v| v.as_ref().len()).collect();
        let mut out = std::ptr::null_mut();
        call(|s| unsafe {
            ffi::px_tensor_create_strings(ptr_or_null(dims), dims.len() as c_int, ptr_or_null(&ptrs),
                                          ptr_or_null(&lengths), values.len(), &mut out, s)
        })?;
        Ok(Tensor::from_raw(out))
    }

    pub fn dtype(&self) -> DType {
        DType(unsafe { ffi::px_tensor_dtype(self.c) })
    }

    pub fn shape(&self) -> Vec<i64> {
        let n = unsafe { ffi::px_tensor_ndim(self.c) };
        (0..n).map(|i| unsafe { ffi::px_tensor_dim(self.c, i) }).collect()
    }

    pub fn num_elements(&self) -> i64 {
        unsafe { ffi::px_tensor_num_elements(self.c) }
    }

    /// The device whose memory holds the tensor ("" for host memory).
    pub fn device(&self) -> String {
        string_of(unsafe { ffi::px_tensor_device_name(self.c) })
    }

    /// A host copy (a device tensor is read after this).
    pub fn to_host(&self) -> Result<Tensor> {
        let mut out = std::ptr::null_mut();
        call(|s| unsafe { ffi::px_tensor_copy_to_host(self.c, &mut out, s) })?;
        Ok(Tensor::from_raw(out))
    }

    /// A copy of the values, which must be of type T, in host memory.
    pub fn values<T: Element>(&self) -> Result<Vec<T>> {
        if self.dtype() != T::DTYPE {
            return Err(error(Code::INVALID_ARGUMENT,
                             format!("the tensor holds {}, not {}", self.dtype().name(), T::DTYPE.name())));
        }
        if unsafe { ffi::px_tensor_is_host_readable(self.c) } == 0 {
            return Err(error(Code::INVALID_ARGUMENT,
                             format!("the tensor is on device {}; copy it with to_host first", self.device())));
        }
        let n = self.num_elements() as usize;
        let mut out = vec![T::default(); n];
        if n > 0 {
            let p = unsafe { ffi::px_tensor_data(self.c) };
            if p.is_null() {
                return Err(error(Code(8), "px_tensor_data returned NULL"));
            }
            unsafe { std::ptr::copy_nonoverlapping(p as *const T, out.as_mut_ptr(), n) };
        }
        Ok(out)
    }

    /// The elements of a string tensor.
    pub fn string_values(&self) -> Result<Vec<Vec<u8>>> {
        (0..self.num_elements())
            .map(|i| {
                let mut data: *const c_char = std::ptr::null();
                let mut length = 0usize;
                call(|s| unsafe { ffi::px_tensor_string(self.c, i, &mut data, &mut length, s) })?;
                Ok(unsafe { std::slice::from_raw_parts(data as *const u8, length) }.to_vec())
            })
            .collect()
    }
}
