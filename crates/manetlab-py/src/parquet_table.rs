//! Writing a result table as a Parquet file, so `manetlab run` needs neither
//! pandas nor pyarrow (importing them took ~0.5 s of a 0.67 s run).
//!
//! Python decides each column's type (results.py `_columns`, which mirrors the
//! dtypes pandas infers) and passes plain lists; this module only encodes them,
//! with the `parquet` crate's low-level writer. Columns are written as pyarrow
//! does for a DataFrame (every column OPTIONAL; strings as UTF-8 byte arrays; an
//! all-missing column of an empty table as the Null logical type), so
//! `pandas.read_parquet` gives back the same DataFrame; uncompressed (the tables
//! are small), and byte-identical for identical input.

use std::fs::File;
use std::sync::Arc;

use parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// One column's values; `None` is a missing value (NaN of a float column).
pub enum Values {
    Int64(Vec<i64>),
    Float64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Str(Vec<Option<String>>),
    /// Only missing values (`len` of them): pandas' object column of an empty table.
    Null(usize),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Int64(v) => v.len(),
            Values::Float64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::Null(n) => *n,
        }
    }

    fn from_py(kind: &str, values: &Bound<'_, PyAny>) -> PyResult<Values> {
        Ok(match kind {
            "int64" => Values::Int64(values.extract()?),
            "float64" => Values::Float64(values.extract()?),
            "bool" => Values::Bool(values.extract()?),
            "str" => Values::Str(values.extract()?),
            "null" => Values::Null(values.len()?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "column kind {other:?}: expected int64, float64, bool, str or null"
                )))
            }
        })
    }
}

fn field(name: &str, values: &Values) -> parquet::errors::Result<Type> {
    let (physical, logical) = match values {
        Values::Int64(_) => (PhysicalType::INT64, None),
        Values::Float64(_) => (PhysicalType::DOUBLE, None),
        Values::Bool(_) => (PhysicalType::BOOLEAN, None),
        Values::Str(_) => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
        Values::Null(_) => (PhysicalType::INT32, Some(LogicalType::Unknown)),
    };
    Type::primitive_type_builder(name, physical)
        .with_repetition(Repetition::OPTIONAL)
        .with_logical_type(logical)
        .build()
}

/// Present values and definition levels (1 present, 0 missing) of an optional column.
fn levels<T: Clone>(values: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let present = values.iter().flatten().cloned().collect();
    let defs = values.iter().map(|v| i16::from(v.is_some())).collect();
    (present, defs)
}

/// Write `columns` (name, values; all of one length) to `out` as a Parquet
/// file of one row group.
pub fn write<W: std::io::Write + Send>(
    out: W,
    columns: &[(String, Values)],
    created_by: &str,
) -> parquet::errors::Result<()> {
    let fields = columns
        .iter()
        .map(|(n, v)| field(n, v).map(Arc::new))
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_created_by(created_by.to_string())
            .build(),
    );
    let mut writer = SerializedFileWriter::new(out, schema, props)?;
    let mut group = writer.next_row_group()?;
    for (_, values) in columns {
        let mut col = group
            .next_column()?
            .expect("one column writer per schema field");
        match values {
            Values::Int64(v) => {
                col.typed::<Int64Type>()
                    .write_batch(v, Some(&vec![1; v.len()]), None)?;
            }
            Values::Float64(v) => {
                let (present, defs) = levels(v);
                col.typed::<DoubleType>()
                    .write_batch(&present, Some(&defs), None)?;
            }
            Values::Bool(v) => {
                let (present, defs) = levels(v);
                col.typed::<BoolType>()
                    .write_batch(&present, Some(&defs), None)?;
            }
            Values::Str(v) => {
                let (present, defs) = levels(v);
                let bytes: Vec<ByteArray> = present
                    .into_iter()
                    .map(|s| ByteArray::from(s.into_bytes()))
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes, Some(&defs), None)?;
            }
            Values::Null(n) => {
                col.typed::<Int32Type>()
                    .write_batch(&[], Some(&vec![0; *n]), None)?;
            }
        }
        col.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(())
}

/// Write a table as a Parquet file: `columns` is a list of `(name, kind,
/// values)`, kind one of "int64", "float64", "bool", "str", "null"; `None` in
/// `values` is a missing value (not allowed in "int64"). All columns have the
/// same length. The GIL is released while encoding and writing.
#[pyfunction]
pub fn write_parquet(
    py: Python<'_>,
    path: std::path::PathBuf,
    columns: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let mut cols = Vec::new();
    for item in columns.iter()? {
        let (name, kind, values): (String, String, Bound<'_, PyAny>) = item?.extract()?;
        let v = Values::from_py(&kind, &values)
            .map_err(|e| PyValueError::new_err(format!("column {name:?} ({kind}): {e}")))?;
        cols.push((name, v));
    }
    let rows = cols.first().map_or(0, |(_, v)| v.len());
    if let Some((name, v)) = cols.iter().find(|(_, v)| v.len() != rows) {
        return Err(PyValueError::new_err(format!(
            "column {name:?} has {} values, the first column {rows}",
            v.len()
        )));
    }
    let created_by = format!("manetlab {} (parquet-rs)", manetlab_core::VERSION);
    py.allow_threads(|| {
        let file = File::create(&path)
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
        let file = std::io::BufWriter::new(file);
        write(file, &cols, &created_by)
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))
    })
}
