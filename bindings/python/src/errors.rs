//! The exceptions: a small hierarchy under `Error`, each instance carrying
//! the kind, the field and the value at fault and the core's own message.
//!
//! # Design
//!
//! One base class, so that `except snowflake_toolkit.Error` catches
//! everything the package raises on purpose, and one subclass per broad
//! kind, so that a caller can catch only what it can act on
//! (`ClockBackwards` is worth a retry, `StoreInUse` is an operator's
//! problem). A bad value raises `InvalidInput`, which is a `ValueError` as
//! well, as Python code expects of a bad argument; a value of the wrong
//! type is a bad value too, so that every refusal names its field the same
//! way. The attributes, not the text, are for programs: `kind` (the finer
//! kind, one of [`Kind::ALL`]), `field` (the input at fault, as the core
//! names it, or `None`), `value` (the value at fault as text, or `None`)
//! and `needs_operator` (whether waiting or retrying cannot help). The
//! message is the core's, word for word, so the package says what the
//! command and the service say.
//!
//! The classes are made when the module is loaded (`InvalidInput` has two
//! bases, which a class from PyO3's `create_exception!` cannot have) and
//! raised from [`Fault`], the one place an error becomes an exception.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// The exception classes. Each is declared once here: its name, its
/// parent, its docstring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Error,
    InvalidInput,
    ClockBackwards,
    TimeExhausted,
    StoreError,
    StoreInUse,
    Unavailable,
}

impl Class {
    /// Parents before children: the order the classes are made in.
    const ALL: [Class; 7] = [
        Class::Error,
        Class::InvalidInput,
        Class::ClockBackwards,
        Class::TimeExhausted,
        Class::StoreError,
        Class::StoreInUse,
        Class::Unavailable,
    ];

    fn name(self) -> &'static str {
        match self {
            Class::Error => "Error",
            Class::InvalidInput => "InvalidInput",
            Class::ClockBackwards => "ClockBackwards",
            Class::TimeExhausted => "TimeExhausted",
            Class::StoreError => "StoreError",
            Class::StoreInUse => "StoreInUse",
            Class::Unavailable => "Unavailable",
        }
    }

    /// The class it derives from; `None` for `Error`, which derives from
    /// `Exception`.
    fn parent(self) -> Option<Class> {
        match self {
            Class::Error => None,
            Class::StoreInUse => Some(Class::StoreError),
            _ => Some(Class::Error),
        }
    }

    fn doc(self) -> &'static str {
        match self {
            Class::Error => {
                "Everything snowflake_toolkit raises on purpose.\n\n\
                 Attributes: kind (str: the finer kind, one of ERROR_KINDS), field (str or None: \
                 the input at fault, such as 'machine', 'id' or 'layout'), value (str or None: the \
                 value at fault as text) and needs_operator (bool: whether retrying or waiting \
                 cannot help). str(error) is the core's message, as the snowflake command words it."
            }
            Class::InvalidInput => {
                "A value given is not allowed: out of range, malformed, of the wrong type, an \
                 unknown field or layout. Also a ValueError. kind is 'invalid_input'."
            }
            Class::ClockBackwards => {
                "The clock went back further than the generator waits out; it refuses to issue \
                 until the clock catches up. kind is 'clock_backwards'."
            }
            Class::TimeExhausted => {
                "The layout's time field cannot hold the time now: no more IDs. kind is \
                 'time_exhausted'."
            }
            Class::StoreError => {
                "The state file (high-water mark) could not be read or written, or its mark is \
                 further ahead of the clock than a restart waits out. kind is 'store'."
            }
            Class::StoreInUse => {
                "The state file is in use by another generator, in this process or another (a \
                 snowflake command too): one state file serves one generator. kind is \
                 'store_in_use'."
            }
            Class::Unavailable => {
                "This object cannot issue IDs: it was closed ('closed'), copied into a child \
                 process by fork ('forked'), its cluster node holds no slot now ('not_ready'), or \
                 the package was built without cluster mode ('no_cluster')."
            }
        }
    }
}

/// What went wrong, as an exception's `kind` says it; each kind belongs to
/// one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    InvalidInput,
    ClockBackwards,
    TimeExhausted,
    Store,
    StoreInUse,
    /// A key file that could not be read for a reason other than its name
    /// or its permissions (the disk failed).
    Io,
    Closed,
    Forked,
    NotReady,
    NoCluster,
    /// A kind of the core's that this package does not know yet.
    Other,
}

impl Kind {
    /// Every kind, for the module's `ERROR_KINDS`.
    pub(crate) const ALL: [Kind; 11] = [
        Kind::InvalidInput,
        Kind::ClockBackwards,
        Kind::TimeExhausted,
        Kind::Store,
        Kind::StoreInUse,
        Kind::Io,
        Kind::Closed,
        Kind::Forked,
        Kind::NotReady,
        Kind::NoCluster,
        Kind::Other,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::InvalidInput => "invalid_input",
            Kind::ClockBackwards => "clock_backwards",
            Kind::TimeExhausted => "time_exhausted",
            Kind::Store => "store",
            Kind::StoreInUse => "store_in_use",
            Kind::Io => "io",
            Kind::Closed => "closed",
            Kind::Forked => "forked",
            Kind::NotReady => "not_ready",
            Kind::NoCluster => "no_cluster",
            Kind::Other => "error",
        }
    }

    fn class(self) -> Class {
        match self {
            Kind::InvalidInput => Class::InvalidInput,
            Kind::ClockBackwards => Class::ClockBackwards,
            Kind::TimeExhausted => Class::TimeExhausted,
            Kind::Store => Class::StoreError,
            Kind::StoreInUse => Class::StoreInUse,
            Kind::Closed | Kind::Forked | Kind::NotReady | Kind::NoCluster => Class::Unavailable,
            Kind::Io | Kind::Other => Class::Error,
        }
    }

    fn of_core(kind: snowflake::ErrorKind) -> Kind {
        use snowflake::ErrorKind as K;
        match kind {
            K::InvalidInput => Kind::InvalidInput,
            K::ClockBackwards => Kind::ClockBackwards,
            K::TimeExhausted => Kind::TimeExhausted,
            K::Store => Kind::Store,
            K::StoreInUse => Kind::StoreInUse,
            // The core's kinds are non-exhaustive: a new one is raised as
            // the base class until this package names it.
            _ => Kind::Other,
        }
    }
}

/// The classes, made once by [`register`], in the order of [`Class::ALL`].
static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

/// Makes the exception classes and adds them to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let classes = CLASSES.get_or_try_init(py, || make_classes(py))?;
    for (class, made) in Class::ALL.iter().zip(classes) {
        module.add(class.name(), made.bind(py))?;
    }
    let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    module.add("ERROR_KINDS", PyTuple::new(py, kinds)?)?;
    Ok(())
}

fn make_classes(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let type_ = py.get_type::<PyType>();
    let mut made: Vec<Py<PyType>> = Vec::with_capacity(Class::ALL.len());
    for class in Class::ALL {
        let mut bases: Vec<Bound<'_, PyType>> = match class.parent() {
            None => vec![py.get_type::<pyo3::exceptions::PyException>()],
            Some(parent) => {
                let at = Class::ALL.iter().position(|c| *c == parent).unwrap_or(0);
                vec![made[at].bind(py).clone()]
            }
        };
        if class == Class::InvalidInput {
            bases.push(py.get_type::<PyValueError>());
        }
        let namespace = PyDict::new(py);
        namespace.set_item("__doc__", class.doc())?;
        namespace.set_item("__module__", "snowflake_toolkit")?;
        let new = type_.call1((class.name(), PyTuple::new(py, bases)?, namespace))?;
        made.push(new.cast_into::<PyType>()?.unbind());
    }
    Ok(made)
}

/// An error on its way to becoming an exception: what the exception's
/// attributes and message will be.
#[derive(Debug)]
pub(crate) struct Fault {
    kind: Kind,
    message: String,
    field: Option<String>,
    value: Option<String>,
    needs_operator: bool,
}

impl Fault {
    /// A fault of this package's own (a refusal the core has no words for:
    /// a generator used after `fork()`, a closed one).
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Fault {
        Fault {
            kind,
            message: message.into(),
            field: None,
            value: None,
            needs_operator: !matches!(kind, Kind::NotReady | Kind::ClockBackwards),
        }
    }

    /// The same fault, naming the input at fault.
    pub(crate) fn field(mut self, field: impl Into<String>) -> Fault {
        self.field = Some(field.into());
        self
    }

    /// The same fault, naming the value at fault.
    pub(crate) fn value(mut self, value: impl Into<String>) -> Fault {
        self.value = Some(value.into());
        self
    }

    /// The same fault, saying whether only an operator can clear it.
    pub(crate) fn needs_operator(mut self, needs_operator: bool) -> Fault {
        self.needs_operator = needs_operator;
        self
    }

    /// The core's error as it is: its kind, field, value and message.
    pub(crate) fn core(err: &snowflake::Error) -> Fault {
        Fault {
            kind: Kind::of_core(err.kind()),
            message: err.to_string(),
            field: err.field().map(str::to_string),
            value: err.value(),
            needs_operator: err.needs_operator(),
        }
    }

    /// A masking error. Its message never holds key material (the crate
    /// sees to that), and it gets no `value`: a key file's path may be the
    /// key itself, pasted where the path goes.
    pub(crate) fn mask(err: &snowflake_mask::Error, field: &str) -> Fault {
        let kind = match err.kind() {
            snowflake_mask::ErrorKind::InvalidInput => Kind::InvalidInput,
            _ => Kind::Io,
        };
        Fault::new(kind, err.to_string())
            .field(field)
            .needs_operator(true)
    }

    /// The exception, raised.
    pub(crate) fn raise(self) -> Raised {
        Python::attach(|py| Raised(self.exception(py)))
    }

    fn exception(self, py: Python<'_>) -> PyErr {
        let made = match CLASSES.get(py) {
            Some(classes) => classes,
            // Only before the module is loaded, which nothing can raise in.
            None => return PyValueError::new_err(self.message),
        };
        let at = Class::ALL
            .iter()
            .position(|c| *c == self.kind.class())
            .unwrap_or(0);
        let built = made[at]
            .bind(py)
            .call1((self.message.as_str(),))
            .and_then(|e| {
                e.setattr("kind", self.kind.name())?;
                e.setattr("field", self.field.as_deref())?;
                e.setattr("value", self.value.as_deref())?;
                e.setattr("needs_operator", self.needs_operator)?;
                Ok(e)
            });
        match built {
            Ok(exception) => PyErr::from_value(exception),
            Err(err) => err,
        }
    }
}

/// A Python exception ready to propagate: what every fallible function of
/// this package returns, so that `?` turns the core's errors, the masking
/// crate's and Python's own into exceptions in one step.
#[derive(Debug)]
pub(crate) struct Raised(PyErr);

impl From<Raised> for PyErr {
    fn from(raised: Raised) -> PyErr {
        raised.0
    }
}

impl From<PyErr> for Raised {
    fn from(err: PyErr) -> Raised {
        Raised(err)
    }
}

impl From<Fault> for Raised {
    fn from(fault: Fault) -> Raised {
        fault.raise()
    }
}

impl From<snowflake::Error> for Raised {
    fn from(err: snowflake::Error) -> Raised {
        Fault::core(&err).raise()
    }
}

/// What the functions of this package return.
pub(crate) type Result<T> = std::result::Result<T, Raised>;
