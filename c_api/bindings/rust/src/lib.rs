//! Rust binding of the Plexus C API (`c_api/include/plexus/c_api.h`):
//! runtimes and plugins, tensors, graphs built operation by operation or
//! imported from TensorFlow, sessions, eager execution and SavedModels.
//!
//! Every object owns a C handle and frees it when dropped. Sessions, eager
//! contexts and SavedModels keep their runtime alive. Failures are
//! [`Error`] values carrying the C API's code and message.
//!
//! Build: `PLEXUS_LIB_DIR=<build>/lib cargo test` (see
//! `c_api/bindings/README.md`).

mod attrs;
mod ffi;
mod graph;
mod options;
mod run;
mod tensor;

pub use attrs::{Attr, Attrs};
pub use graph::{Graph, OpSpec, Operation, Output, Shape};
pub use options::{read_checkpoint, write_checkpoint, Callable, RunReport, SessionOptions};
pub use run::{Device, EagerContext, Runtime, SavedModel, Session, Signature, TensorSpec};
pub use tensor::{DType, Tensor};

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;

/// A canonical status code (Abseil's numbers), as `px_code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub i32);

impl Code {
    pub const INVALID_ARGUMENT: Code = Code(3);
    pub const NOT_FOUND: Code = Code(5);
    pub const ALREADY_EXISTS: Code = Code(6);
    pub const OUT_OF_RANGE: Code = Code(11);
    pub const INTERNAL: Code = Code(13);
}

/// A failed call: the C API's code and its message, which names the
/// function and what was wrong.
#[derive(Clone, Debug)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plexus: {} (code {})", self.message, self.code.0)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Runs `f` with a fresh px_status and turns its code into a Result.
pub(crate) fn call<F: FnOnce(*mut ffi::px_status) -> ffi::px_code>(f: F) -> Result<()> {
    struct Status(*mut ffi::px_status);
    impl Drop for Status {
        fn drop(&mut self) {
            unsafe { ffi::px_status_destroy(self.0) }
        }
    }
    let status = Status(unsafe { ffi::px_status_create() });
    let code = f(status.0);
    if code == 0 {
        Ok(())
    } else {
        let message = unsafe { CStr::from_ptr(ffi::px_status_message(status.0)) }.to_string_lossy().into_owned();
        Err(Error { code: Code(code), message })
    }
}

pub(crate) fn error(code: Code, message: impl Into<String>) -> Error {
    Error { code, message: message.into() }
}

/// C copies of Rust strings for one call.
#[derive(Default)]
pub(crate) struct CStrings {
    owned: Vec<CString>,
}

impl CStrings {
    pub(crate) fn add(&mut self, s: &str) -> Result<*const c_char> {
        let c = CString::new(s).map_err(|_| error(Code::INVALID_ARGUMENT, format!("'{}' holds a NUL byte", s)))?;
        let p = c.as_ptr();
        self.owned.push(c);
        Ok(p)
    }

    /// NULL for "".
    pub(crate) fn optional(&mut self, s: &str) -> Result<*const c_char> {
        if s.is_empty() {
            Ok(std::ptr::null())
        } else {
            self.add(s)
        }
    }

    pub(crate) fn array<S: AsRef<str>>(&mut self, values: &[S]) -> Result<Vec<*const c_char>> {
        values.iter().map(|v| self.add(v.as_ref())).collect()
    }
}

pub(crate) fn string_of(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

pub(crate) fn ptr_or_null<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        std::ptr::null()
    } else {
        v.as_ptr()
    }
}
