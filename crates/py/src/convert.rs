//! The bindings' one way across the boundary: Rust errors become `SuperlinearError`, config
//! dicts become the crates' typed settings (serde, unknown or mistyped fields named in one
//! line), and result records become dicts. Every config the bindings take is listed here once,
//! with its name, so Python can ask for its defaults.

use crate::SuperlinearError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Display;

/// A user-facing error (a bad parameter or input file) from any crate, with its message.
pub(crate) fn to_py(e: impl Display) -> PyErr {
    SuperlinearError::new_err(e.to_string())
}

/// A config the bindings accept: deserialised with its defaults, unknown fields rejected.
pub(crate) trait Settings: DeserializeOwned + Serialize + Default {
    /// The name errors and `config_defaults` use.
    const NAME: &'static str;
}

macro_rules! configs {
    ($($ty:ty => $name:literal,)*) => {
        $(impl Settings for $ty { const NAME: &'static str = $name; })*

        /// Every config's name.
        pub(crate) const CONFIG_NAMES: &[&str] = &[$($name),*];

        /// The defaults of the config called `name`, as a dict; `None` for an unknown name.
        pub(crate) fn defaults_of<'py>(py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
            match name {
                $($name => record(py, &<$ty>::default()).map(Some),)*
                _ => Ok(None),
            }
        }

        /// `config` checked as the config called `name` and completed with its defaults;
        /// `None` for an unknown name.
        pub(crate) fn checked<'py>(
            py: Python<'py>,
            name: &str,
            config: &Bound<'py, PyDict>,
        ) -> PyResult<Option<Bound<'py, PyAny>>> {
            match name {
                $($name => record(py, &settings::<$ty>(config)?).map(Some),)*
                _ => Ok(None),
            }
        }
    };
}

configs! {
    superlinear_core::config::RunSettings => "run",
    superlinear_core::config::WorkloadSettings => "workload",
    superlinear_classify::config::LoadSettings => "classify_load",
    superlinear_classify::config::SyntheticSettings => "classify_synthetic",
    superlinear_classify::config::RunSettings => "classify_run",
    superlinear_nftbench::config::LoadSettings => "nft_load",
    superlinear_nftbench::sender::SendSpec => "nft_send",
    superlinear_xdp::config::XdpLoadSettings => "xdp_load",
    superlinear_cachetier::config::ClientSettings => "cache_client",
    superlinear_cachetier::config::BenchSettings => "cache_bench",
    superlinear_cache::generate::TraceSpec => "latency_trace",
    superlinear_sched::config::TrafficSettings => "attack_traffic",
    superlinear_sched::config::SweepSettings => "attack_sweep",
    superlinear_sched::config::KeyAttackSettings => "attack_key",
    superlinear_sched::config::ClassifierAttackSettings => "attack_classifier",
}

/// A config dict as its typed settings. A missing field or one set to `None` takes its
/// default; an unknown field or a value of the wrong type is one `SuperlinearError` line that
/// names the config and the field.
pub(crate) fn settings<T: Settings>(config: &Bound<'_, PyDict>) -> PyResult<T> {
    let fail = |at: &str, message: &str| SuperlinearError::new_err(format!("{} config: {at}{message}", T::NAME));
    let value = json_value(config.as_any()).map_err(|(path, why)| fail(&format!("field '{path}': "), &why))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = one_line(&e.inner().to_string());
        let unknown = message.starts_with("unknown field");
        let at = match path.rsplit_once('.') {
            _ if path == "." => String::new(),
            None if unknown => String::new(),
            Some((parent, _)) if unknown => format!("in '{parent}': "),
            _ => format!("field '{path}': "),
        };
        fail(&at, &message)
    })
}

/// serde's message in the boundary's spelling: `unknown field 'x' (expected one of: a, b)`,
/// `invalid type: string "abc", expected usize`.
fn one_line(message: &str) -> String {
    let m = message.lines().next().unwrap_or_default();
    match m.split_once(", expected one of ") {
        Some((head, known)) if head.starts_with("unknown field") => {
            format!("{} (expected one of: {})", head.replace('`', "'"), known.replace('`', ""))
        }
        _ if m.starts_with("unknown field") => m.replace('`', "'"),
        _ => m.replace('`', ""),
    }
}

/// A Python config value as JSON data, `None` values of dicts left out (None means "the
/// default", as a missing field does). Only what a config can hold converts: dicts with
/// string keys, lists and tuples, strings, booleans, integers and floats; anything else is
/// an error with the path to it.
fn json_value(obj: &Bound<'_, PyAny>) -> Result<serde_json::Value, (String, String)> {
    use serde_json::Value;
    let bad = |why: String| (String::new(), why);
    // The path of a nested failure: `workload.m`, `attack_rates[2]`.
    let within = |prefix: String| {
        move |(path, why): (String, String)| match path.chars().next() {
            None => (prefix.clone(), why),
            Some('[') => (format!("{prefix}{path}"), why),
            Some(_) => (format!("{prefix}.{path}"), why),
        }
    };
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| bad(format!("keys must be strings, got {k}")))?;
            if !v.is_none() {
                map.insert(key.clone(), json_value(&v).map_err(within(key))?);
            }
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> =
            obj.try_iter().and_then(|it| it.collect()).map_err(|e| bad(e.to_string()))?;
        let values = items.iter().enumerate().map(|(i, v)| json_value(v).map_err(within(format!("[{i}]"))));
        return values.collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return obj.extract::<u64>().map(Value::from).map_err(|_| bad(format!("integer {obj} is out of range")));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| bad(format!("{} is not a finite number", f.value())));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow().map_err(|e| bad(e.to_string()))?.into_owned()));
    }
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(bad(format!("a config cannot hold a value of type '{type_name}'")))
}

/// A result record (or a config's defaults) as Python values: structs become dicts.
pub(crate) fn record<'py, T: Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| SuperlinearError::new_err(e.to_string()))
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
