//! `Masker`: IDs shown to the world without their time, node and volume,
//! by the masking crate's FF1 over the layout's bits, with the key read
//! from a file as `snowflake mask --key-file` reads it.
//!
//! The key lives in the masking crate's types alone: it is never copied
//! into a Python object, a repr or an error, and a key file's path is shown
//! only as that crate shows it (hidden when it could be the key itself).

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyUserWarning;
use pyo3::prelude::*;
use snowflake::Layout;
use snowflake_mask::{KeyFile, Masker};

use crate::errors::{Fault, Kind, Result};
use crate::input;
use crate::layout::{self, PyLayout};

/// Masker(key_file, layout='twitter')
///
/// A keyed, reversible permutation of the layout's IDs: mask(id) gives
/// another ID of the same layout that tells nothing of when or where the
/// first was made; unmask() turns it back, with the same key only. The key
/// is read from key_file, 64 hex characters as `snowflake mask-key new`
/// writes them, and never appears in a repr or an error. A key file others
/// can read is used, with a UserWarning.
#[pyclass(frozen, module = "snowflake_toolkit", name = "Masker")]
#[derive(Debug)]
pub(crate) struct PyMasker {
    masker: Masker,
    layout: Arc<Layout>,
    /// The key file as messages may name it.
    key_file: String,
}

#[pymethods]
impl PyMasker {
    #[new]
    #[pyo3(
        signature = (key_file, layout = None),
        text_signature = "(key_file, layout='twitter')"
    )]
    fn new(
        py: Python<'_>,
        key_file: &Bound<'_, PyAny>,
        layout: Option<&Bound<'_, PyAny>>,
    ) -> Result<PyMasker> {
        let layout = layout::resolve(layout)?;
        let path: PathBuf = key_file.extract().map_err(|_| {
            Fault::new(
                Kind::InvalidInput,
                "key_file is not a path; give the path of the file that holds the key (a str or \
                 an os.PathLike), never the key itself",
            )
            .field("key_file")
            .raise()
        })?;
        let file = py
            .detach(|| KeyFile::read(&path))
            .map_err(|err| Fault::mask(&err, "key_file").raise())?;
        if let Some(warning) = file.warning() {
            // The message is the crate's: a path, a mode and a command, no NUL.
            let warning = CString::new(warning).unwrap_or_default();
            PyErr::warn(py, py.get_type::<PyUserWarning>().as_any(), &warning, 1)?;
        }
        let masker = Masker::new(&layout, file.key()).map_err(|err| {
            Fault::mask(&err, "layout")
                .value(layout.name().into_owned())
                .raise()
        })?;
        Ok(PyMasker {
            masker,
            key_file: file.name(),
            layout,
        })
    }

    /// mask(id) -> int
    ///
    /// The ID's masked form: an ID of the same layout. Raises InvalidInput
    /// (field 'id') for an ID the layout cannot have.
    fn mask(&self, id: &Bound<'_, PyAny>) -> Result<u64> {
        Ok(self.masker.mask(input::id(id)?)?.get())
    }

    /// unmask(masked) -> int
    ///
    /// The ID a masked ID was made from (with this key).
    fn unmask(&self, masked: &Bound<'_, PyAny>) -> Result<u64> {
        Ok(self.masker.unmask(input::id(masked)?)?.get())
    }

    /// The layout whose IDs it masks.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            layout: Arc::clone(&self.layout),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Masker(key_file={:?}, layout={:?})",
            self.key_file,
            &*self.layout.name()
        )
    }
}

/// new_key_file(path) -> None
///
/// Writes a new random 256-bit masking key to a new file at path, readable
/// by its owner alone (mode 0600), as `snowflake mask-key new` does. Never
/// writes over an existing file. Keep it secret and keep a copy: without
/// it, masked IDs cannot be unmasked.
#[pyfunction]
pub(crate) fn new_key_file(py: Python<'_>, path: &Bound<'_, PyAny>) -> Result<()> {
    let path: PathBuf = path.extract().map_err(|_| {
        Fault::new(
            Kind::InvalidInput,
            "path is not a path; give a str or an os.PathLike",
        )
        .field("path")
        .raise()
    })?;
    py.detach(|| KeyFile::create_new(&path))
        .map_err(|err| Fault::mask(&err, "path").raise())?;
    Ok(())
}
