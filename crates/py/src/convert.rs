//! The bindings' one way across the boundary: Rust errors become `SuperlinearError`, config
//! dicts give typed fields with defaults, and result structs shared by several modules (the core
//! accounting, registry listings) become dicts.

use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::fmt::Display;
use superlinear_core::accounting::Accounting;

/// A user-facing error (a bad parameter or input file) from any crate, with its message.
pub(crate) fn to_py(e: impl Display) -> PyErr {
    SuperlinearError::new_err(e.to_string())
}

/// Field `key` of a config dict, or `default` when it is missing or `None`; a value of the wrong
/// type is a `SuperlinearError` naming the field.
pub(crate) fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, default: T) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract().map_err(|_| {
            SuperlinearError::new_err(format!("config field '{key}' has the wrong type ({})", v.get_type()))
        }),
        _ => Ok(default),
    }
}

/// A list with one dict per item, each filled by `fill` (registry listings, per-worker rows).
pub(crate) fn dict_list<'py, T>(
    py: Python<'py>,
    items: impl IntoIterator<Item = T>,
    fill: impl Fn(&Bound<'py, PyDict>, T) -> PyResult<()>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for item in items {
        let d = PyDict::new(py);
        fill(&d, item)?;
        list.append(d)?;
    }
    Ok(list)
}

/// One run's accounting (core engine and packet classifier alike), with its derived figures.
pub(crate) fn accounting_dict<'py>(py: Python<'py>, a: &Accounting) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("k", a.k)?;
    d.set_item("requests", a.requests)?;
    d.set_item("wall_ns", a.wall_ns)?;
    d.set_item("dispatcher_cpu_ns", a.dispatcher_cpu_ns)?;
    d.set_item("worker_cpu_ns", a.worker_cpu_ns.clone())?;
    d.set_item("worker_work", a.worker_work.clone())?;
    d.set_item("worker_requests", a.worker_requests.clone())?;
    d.set_item("projected_ns", a.projected_ns())?;
    d.set_item("work_span", a.work_span())?;
    d.set_item("work_total", a.work_total())?;
    d.set_item("hit_rate", a.hit_rate())?;
    d.set_item("load_imbalance", a.load_imbalance())?;
    Ok(d)
}

/// [`accounting_dict`] of a mode that ran, `None` for one that did not.
pub(crate) fn accounting_or_none<'py>(py: Python<'py>, a: Option<&Accounting>) -> PyResult<Bound<'py, PyAny>> {
    match a {
        Some(a) => Ok(accounting_dict(py, a)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}
