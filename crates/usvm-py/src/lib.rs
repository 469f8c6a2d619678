//! `usvm._usvm`: the PyO3 bindings under the Python package `usvm` (python/src/usvm).
//!
//! Deliberately thin: numpy / scipy arrays are converted to a [`usvm::Dataset`] and its
//! [`usvm::Covariances`], the registry's [`usvm::fit()`] runs with the GIL released (`registry.rs`), and
//! the fitted `Model` answers in numpy arrays. Everything scikit-learn-shaped (validation, label
//! encoding, metadata routing, Platt cross-validation) lives in Python.
//!
//! Features cross without copies where the core can read them as they are: a C- or Fortran-contiguous
//! float64 `X` (the core reads a column-major matrix's rows with a stride), the float64 values and int32
//! column indices of a CSR matrix (the core's columns are `u32`), int64 row pointers and contiguous int64
//! labels are borrowed (`Dataset<'a>` views the numpy memory while `fit` or `predict` runs with the GIL
//! released). Otherwise each array is read once into the core's storage: float32 is widened (8 bytes per
//! value: 2× the float32 array), other strides gathered into row-major order (1× the array), int64 CSR column
//! indices narrowed to `u32` (checked: a column ≥ 2^32 is an error), int32 row pointers widened to `usize`
//! (ℓ + 1 entries), strided labels gathered (one copy). Covariances, weights and privileged features follow
//! the same rule for `X*`; covariance arrays are always copied (the core owns them). Errors of the core arrive as `ValueError` carrying the
//! core's message; arrays of an unsupported type as `TypeError`.

mod besvm;
mod plot;
mod progress;
mod registry;
mod sharded;
mod svm_plus;
mod uncertainty;

use ndarray::{Array, ArrayView, ArrayView1, Dimension, Ix1, Ix2, Ix3, Zip};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::borrow::Cow;

use usvm::features::DenseMatrix;
use usvm::{Covariances, CsrMatrix, Dataset, Features};

/// The core's error as the typed Python exception (all subclasses of `ValueError`).
pub(crate) fn value_error(e: usvm::Error) -> PyErr {
    registry::to_py_err(e)
}

// ---------------------------------------------------------------------------------------------------------
// numpy → ndarray without needless copies

/// A borrowed float64 or float32 numpy array of dimension `D`.
enum Float<'py, D: Dimension> {
    F64(PyReadonlyArray<'py, f64, D>),
    F32(PyReadonlyArray<'py, f32, D>),
}

/// A view of a [`Float`] (`Send`, so that the copy can run with the GIL released).
enum FloatView<'a, D: Dimension> {
    F64(ArrayView<'a, f64, D>),
    F32(ArrayView<'a, f32, D>),
}

impl<'py, D: Dimension> Float<'py, D> {
    fn extract(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray<'py, f64, D>>() {
            return Ok(Float::F64(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray<'py, f32, D>>() {
            return Ok(Float::F32(a));
        }
        Err(PyTypeError::new_err(format!(
            "{what} must be a {}-dimensional numpy array of float64 or float32, got {}",
            D::NDIM.map_or("n".to_string(), |n| n.to_string()),
            describe(obj)
        )))
    }

    fn view(&self) -> FloatView<'_, D> {
        match self {
            Float::F64(a) => FloatView::F64(a.as_array()),
            Float::F32(a) => FloatView::F32(a.as_array()),
        }
    }
}

impl<D: Dimension> FloatView<'_, D> {
    fn shape(&self) -> &[usize] {
        match self {
            FloatView::F64(a) => a.shape(),
            FloatView::F32(a) => a.shape(),
        }
    }

    /// One pass into owned row-major f64: a memcpy for C-ordered float64, otherwise widening and/or
    /// transposing while copying.
    fn to_owned_c(&self) -> Array<f64, D> {
        match self {
            FloatView::F64(a) if a.is_standard_layout() => a.to_owned(),
            FloatView::F64(a) => copy_into_c(a, |x| x),
            FloatView::F32(a) => copy_into_c(a, f64::from),
        }
    }
}

impl<'a> FloatView<'a, Ix2> {
    /// Row-major f64 rows: borrowed for C-contiguous float64, else copied once (widened or transposed).
    fn to_dense(&self) -> DenseMatrix<'a> {
        match self {
            FloatView::F64(a) => DenseMatrix::from_view(*a),
            FloatView::F32(a) => DenseMatrix::from_array(copy_into_c(a, f64::from)),
        }
    }
}

impl<'a> FloatView<'a, Ix1> {
    /// The values as f64: borrowed for contiguous float64, else copied once.
    fn to_values(&self) -> Cow<'a, [f64]> {
        match self {
            FloatView::F64(a) => match a.to_slice() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(a.to_vec()),
            },
            FloatView::F32(a) => Cow::Owned(a.iter().map(|&v| f64::from(v)).collect()),
        }
    }
}

/// Integer labels as the core reads them: borrowed when contiguous, else copied once (call it with the GIL
/// released).
pub(crate) fn labels_of<'a>(y: &ArrayView1<'a, i64>) -> Cow<'a, [i64]> {
    match y.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(y.to_vec()),
    }
}

fn copy_into_c<T: Copy, D: Dimension>(a: &ArrayView<'_, T, D>, f: impl Fn(T) -> f64) -> Array<f64, D> {
    let mut out = Array::<f64, D>::uninit(a.raw_dim());
    Zip::from(&mut out).and(a).for_each(|o, &x| {
        o.write(f(x));
    });
    // SAFETY: Zip visited every element of `out` exactly once.
    unsafe { out.assume_init() }
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.cast::<PyUntypedArray>() {
        Ok(a) => format!(
            "an array of dtype {} with {} dimension(s)",
            a.dtype().str().map_or("?".into(), |s| s.to_string()),
            a.ndim()
        ),
        Err(_) => obj.get_type().name().map_or("an object".into(), |n| format!("an object of type {n}")),
    }
}

/// An integer index array (scipy uses int32 or int64).
enum Index<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

impl<'py> Index<'py> {
    fn extract(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(Index::I32(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Index::I64(a));
        }
        Err(PyTypeError::new_err(format!("{what} must be a 1-dimensional int32 or int64 array, got {}", describe(obj))))
    }
}

/// A scipy.sparse CSR matrix, borrowed.
struct Csr<'py> {
    data: Float<'py, Ix1>,
    indices: Index<'py>,
    indptr: Index<'py>,
    n_cols: usize,
}

/// A view of a [`Csr`].
struct CsrView<'a> {
    data: FloatView<'a, Ix1>,
    indices: IndexView<'a>,
    indptr: IndexView<'a>,
    n_cols: usize,
}

enum IndexView<'a> {
    I32(ArrayView<'a, i32, Ix1>),
    I64(ArrayView<'a, i64, Ix1>),
}

impl Index<'_> {
    fn view(&self) -> IndexView<'_> {
        match self {
            Index::I32(a) => IndexView::I32(a.as_array()),
            Index::I64(a) => IndexView::I64(a.as_array()),
        }
    }
}

impl<'a> IndexView<'a> {
    /// Row pointers as `usize`: borrowed for contiguous int64 (the same bytes on a 64-bit target, once no
    /// entry is negative), else widened (ℓ + 1 entries).
    fn to_indptr(&self, what: &'static str) -> usvm::Result<Cow<'a, [usize]>> {
        let bad = |v: i64| usvm::Error::MalformedSparse { what, detail: format!("negative entry {v}") };
        match self {
            IndexView::I32(a) => a.iter().map(|&v| usize::try_from(v).map_err(|_| bad(v.into()))).collect(),
            IndexView::I64(a) => {
                if let Some(&v) = a.iter().find(|&&v| v < 0) {
                    return Err(bad(v));
                }
                match a.to_slice() {
                    Some(s) if usize::BITS == i64::BITS => {
                        // SAFETY: usize and i64 have the same size and alignment here (checked above), every
                        // entry is non-negative so reads as the same value, and the slice outlives 'a.
                        Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<usize>(), s.len()) }))
                    }
                    _ => Ok(Cow::Owned(a.iter().map(|&v| v as usize).collect())),
                }
            }
        }
    }

    /// Column indices as `u32`: borrowed for contiguous int32 (a non-negative i32 has the bits of the same
    /// u32; checked, not copied), else narrowed once (an entry ≥ 2^32 is an error naming the array).
    fn to_columns(&self, what: &'static str) -> usvm::Result<Cow<'a, [u32]>> {
        let bad = |v: i64| usvm::Error::MalformedSparse {
            what,
            detail: match v < 0 {
                true => format!("negative entry {v}"),
                false => format!("column index {v} exceeds the 32-bit column range (at most {})", u32::MAX),
            },
        };
        match self {
            IndexView::I32(a) => {
                if let Some(&v) = a.iter().find(|&&v| v < 0) {
                    return Err(bad(v.into()));
                }
                match a.to_slice() {
                    // SAFETY: u32 and i32 have the same size and alignment, every entry is non-negative so
                    // reads as the same value, and the slice outlives 'a.
                    Some(s) => {
                        Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u32>(), s.len()) }))
                    }
                    None => Ok(Cow::Owned(a.iter().map(|&v| v as u32).collect())),
                }
            }
            IndexView::I64(a) => a.iter().map(|&v| u32::try_from(v).map_err(|_| bad(v))).collect(),
        }
    }
}

impl<'py> Csr<'py> {
    fn is_csr(obj: &Bound<'py, PyAny>) -> PyResult<bool> {
        if !obj.hasattr("indptr")? {
            return Ok(false);
        }
        let format: String = obj.getattr("format")?.extract()?;
        if format != "csr" {
            return Err(PyTypeError::new_err(format!("sparse matrices must be in CSR format, got {format}")));
        }
        Ok(true)
    }

    fn extract(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        let data = Float::extract(&obj.getattr("data")?, what)?;
        let indices = Index::extract(&obj.getattr("indices")?, "CSR indices")?;
        let indptr = Index::extract(&obj.getattr("indptr")?, "CSR indptr")?;
        let (_, n_cols): (usize, usize) = obj.getattr("shape")?.extract()?;
        Ok(Csr { data, indices, indptr, n_cols })
    }

    fn view(&self) -> CsrView<'_> {
        CsrView {
            data: self.data.view(),
            indices: self.indices.view(),
            indptr: self.indptr.view(),
            n_cols: self.n_cols,
        }
    }
}

impl<'a> CsrView<'a> {
    /// The core's CSR matrix, borrowing what it can (see the module docs), validated.
    fn to_matrix(&self, what: &'static str) -> usvm::Result<CsrMatrix<'a>> {
        let m = CsrMatrix {
            n_cols: self.n_cols,
            indptr: self.indptr.to_indptr("CSR indptr")?,
            indices: self.indices.to_columns("CSR indices")?,
            values: self.data.to_values(),
        };
        m.validate(what)?;
        Ok(m)
    }
}

/// The example means as borrowed from Python.
enum Means<'py> {
    Dense(Float<'py, Ix2>),
    Sparse(Csr<'py>),
}

/// The covariances as borrowed from Python; the form follows the shape.
enum Cov<'py> {
    None,
    Isotropic(Float<'py, Ix1>),
    Diagonal(Float<'py, Ix2>),
    SparseDiagonal(Csr<'py>),
    Full(Float<'py, Ix3>),
    LowRank(Float<'py, Ix3>, Option<Float<'py, Ix2>>),
}

impl<'py> Cov<'py> {
    /// `None`; an `(n,)` array (isotropic `s_i² I`); an `(n, d)` array or CSR matrix (diagonal); an `(n, d, d)`
    /// array (full); a pair `(U, v)` with `U` of shape `(n, d, r)` and `v` of shape `(n, d)` or `None`
    /// (`Σ_i = U_i U_iᵀ + diag(v_i)`).
    fn extract(obj: Option<&Bound<'py, PyAny>>) -> PyResult<Self> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(Cov::None) };
        if obj.cast::<PyTuple>().is_ok() || obj.cast::<PyList>().is_ok() {
            let (u, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = obj.extract().map_err(|_| {
                PyTypeError::new_err(
                    "a low-rank covariance is a pair (U, v): U of shape (n, d, r), v of shape (n, d) or None",
                )
            })?;
            let v = if v.is_none() { None } else { Some(Float::extract(&v, "low-rank diagonal v")?) };
            return Ok(Cov::LowRank(Float::extract(&u, "low-rank factors U")?, v));
        }
        if Csr::is_csr(obj)? {
            return Ok(Cov::SparseDiagonal(Csr::extract(obj, "X_cov")?));
        }
        let ndim = obj.cast::<PyUntypedArray>().map(|a| a.ndim()).map_err(|_| {
            PyTypeError::new_err(format!(
                "X_cov must be a numpy array, a CSR matrix or a pair (U, v), got {}",
                describe(obj)
            ))
        })?;
        Ok(match ndim {
            1 => Cov::Isotropic(Float::extract(obj, "X_cov")?),
            2 => Cov::Diagonal(Float::extract(obj, "X_cov")?),
            3 => Cov::Full(Float::extract(obj, "X_cov")?),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "X_cov must have shape (n,), (n, d) or (n, d, d); got {ndim} dimensions"
                )));
            }
        })
    }
}

/// Means, covariances and weights as borrowed from Python (alive while the GIL is released).
pub(crate) struct Borrowed<'py> {
    means: Means<'py>,
    cov: Cov<'py>,
    weights: Option<Float<'py, Ix1>>,
}

pub(crate) fn borrow_data<'py>(
    x: &Bound<'py, PyAny>,
    cov: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<&Bound<'py, PyAny>>,
) -> PyResult<Borrowed<'py>> {
    let means =
        if Csr::is_csr(x)? { Means::Sparse(Csr::extract(x, "X")?) } else { Means::Dense(Float::extract(x, "X")?) };
    let weights = match sample_weight.filter(|w| !w.is_none()) {
        Some(w) => Some(Float::extract(w, "sample_weight")?),
        None => None,
    };
    Ok(Borrowed { means, cov: Cov::extract(cov)?, weights })
}

/// Views of everything the core needs: `Send`, so that the one copy into the core's storage happens with
/// the GIL released.
pub(crate) struct Views<'a> {
    means: MeansView<'a>,
    cov: CovView<'a>,
    weights: Option<FloatView<'a, Ix1>>,
}

enum MeansView<'a> {
    Dense(FloatView<'a, Ix2>),
    Sparse(CsrView<'a>),
}

enum CovView<'a> {
    None,
    Isotropic(FloatView<'a, Ix1>),
    Diagonal(FloatView<'a, Ix2>),
    SparseDiagonal(CsrView<'a>),
    Full(FloatView<'a, Ix3>),
    LowRank(FloatView<'a, Ix3>, Option<FloatView<'a, Ix2>>),
}

impl Borrowed<'_> {
    pub(crate) fn views(&self) -> Views<'_> {
        let means = match &self.means {
            Means::Dense(a) => MeansView::Dense(a.view()),
            Means::Sparse(m) => MeansView::Sparse(m.view()),
        };
        let cov = match &self.cov {
            Cov::None => CovView::None,
            Cov::Isotropic(a) => CovView::Isotropic(a.view()),
            Cov::Diagonal(a) => CovView::Diagonal(a.view()),
            Cov::SparseDiagonal(m) => CovView::SparseDiagonal(m.view()),
            Cov::Full(a) => CovView::Full(a.view()),
            Cov::LowRank(u, v) => CovView::LowRank(u.view(), v.as_ref().map(Float::view)),
        };
        Views { means, cov, weights: self.weights.as_ref().map(Float::view) }
    }
}

fn to_vec(a: &FloatView<'_, Ix1>) -> Vec<f64> {
    match a {
        FloatView::F64(a) => a.to_vec(),
        FloatView::F32(a) => a.iter().map(|&v| f64::from(v)).collect(),
    }
}

impl<'a> Views<'a> {
    /// The core's dataset of these labels (owned or borrowed): the features borrowed where they can be, the
    /// rest copied once into owned row-major f64 (see the module docs).
    pub(crate) fn to_dataset(&self, labels: impl Into<Cow<'a, [i64]>>) -> usvm::Result<Dataset<'a>> {
        let features = match &self.means {
            MeansView::Dense(a) => Features::Dense(a.to_dense()),
            MeansView::Sparse(m) => Features::Sparse(m.to_matrix("features")?),
        };
        let covariances = match &self.cov {
            CovView::None => Covariances::None,
            CovView::Isotropic(a) => Covariances::isotropic(to_vec(a)),
            CovView::Diagonal(a) => Covariances::diagonal(a.to_owned_c()),
            CovView::SparseDiagonal(m) => Covariances::sparse_diagonal(m.to_matrix("variances")?),
            CovView::Full(a) => {
                let s = a.shape();
                if s[1] != s[2] {
                    return Err(usvm::Error::DimensionMismatch {
                        what: "full covariances (columns)",
                        expected: s[1],
                        found: s[2],
                    });
                }
                usvm::memory::reserve("a copy of the full covariances", usvm::covariance::FULL_REMEDY, s)?;
                Covariances::full(a.to_owned_c())
            }
            CovView::LowRank(u, v) => {
                // One (d × r) row-major factor per example, copied straight from the (n, d, r) array.
                let factors = match u {
                    FloatView::F64(u) => u.outer_iter().map(|f| f.as_standard_layout().into_owned()).collect(),
                    FloatView::F32(u) => u.outer_iter().map(|f| f.mapv(f64::from)).collect(),
                };
                Covariances::low_rank(factors, v.as_ref().map(FloatView::to_owned_c))
            }
        };
        let (labels, weights) = (labels.into(), self.weights.as_ref().map(to_vec));
        Ok(Dataset { features, labels, weights, covariances, privileged: None })
    }
}

// ---------------------------------------------------------------------------------------------------------

/// `J(w, b) = λ/2‖w‖² + (1/ℓ) Σ c_i L(d_i, σ_i)` with the expected hinge loss `L` (the hinge where `σ_i = 0`)
/// for labels `y_i ∈ {-1, +1}`, evaluated by the core's objective (no smoothing floor).
#[pyfunction]
#[pyo3(signature = (x, y, coef, intercept, *, cov=None, sample_weight=None, lam=0.01, fit_intercept=true))]
#[allow(clippy::too_many_arguments)]
fn objective<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    coef: PyReadonlyArray1<'py, f64>,
    intercept: f64,
    cov: Option<&Bound<'py, PyAny>>,
    sample_weight: Option<&Bound<'py, PyAny>>,
    lam: f64,
    fit_intercept: bool,
) -> PyResult<f64> {
    use usvm::loss::ExpectedHinge;
    use usvm::objective::{Objective, Problem};
    let data = borrow_data(x, cov, sample_weight)?;
    let (views, y, coef) = (data.views(), y.as_array(), coef.as_array());
    py.detach(|| {
        let dataset = views.to_dataset(vec![0; y.len()])?;
        let (l, n) = (dataset.n_samples(), dataset.n_features());
        if y.len() != l {
            return Err(usvm::Error::DimensionMismatch { what: "labels", expected: l, found: y.len() });
        }
        if coef.len() != n {
            return Err(usvm::Error::DimensionMismatch { what: "coef", expected: n, found: coef.len() });
        }
        if let Some(w) = &dataset.weights
            && w.len() != l
        {
            return Err(usvm::Error::DimensionMismatch { what: "weights", expected: l, found: w.len() });
        }
        if let Features::Dense(a) = &dataset.features
            && let Some(((index, _), &value)) = a.view().indexed_iter().find(|(_, v)| !v.is_finite())
        {
            return Err(usvm::Error::NonFinite { what: "features", index, value });
        }
        dataset.covariances.validate(l, n)?;
        let y = y.to_vec();
        let problem = Problem {
            features: &dataset.features,
            y: &y,
            weights: dataset.weights.as_deref(),
            covariances: dataset.covariances.as_dyn(),
        };
        let objective = Objective { fit_intercept, ..Objective::new(problem, ExpectedHinge, lam) };
        let mut theta = coef.to_vec();
        if fit_intercept {
            theta.push(intercept);
        }
        Ok(objective.value(&theta))
    })
    .map_err(value_error)
}

/// Platt scaling fitted to decision values (LIBSVM's `sigmoid_train`): returns `(a, b, n_iter, converged)`
/// of `P(y = 1 | f) = 1/(1 + exp(a f + b))`.
#[pyfunction]
fn fit_platt(
    scores: PyReadonlyArray1<'_, f64>,
    positive: PyReadonlyArray1<'_, bool>,
) -> PyResult<(f64, f64, usize, bool)> {
    let fit = usvm::calibration::fit_platt(&scores.as_array().to_vec(), &positive.as_array().to_vec())
        .map_err(value_error)?;
    Ok((fit.platt.a, fit.platt.b, fit.n_iter, fit.converged))
}

/// A numpy array of indices.
type Indices<'py> = Bound<'py, PyArray1<usize>>;

/// `usvm::model_selection::stratified_split`: a seeded, stratified `(train, test)` split of `0..len(labels)`
/// with `round(test_fraction · n_c)` test examples of each class `c`; both index arrays sorted.
#[pyfunction]
#[pyo3(signature = (labels, test_fraction, seed=0))]
fn stratified_split<'py>(
    py: Python<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    test_fraction: f64,
    seed: u64,
) -> PyResult<(Indices<'py>, Indices<'py>)> {
    if !(0.0..=1.0).contains(&test_fraction) {
        return Err(PyValueError::new_err(format!("test_fraction must be in [0, 1]; got {test_fraction}")));
    }
    let labels = labels.as_array().to_vec();
    let (train, test) = usvm::model_selection::stratified_split(&labels, test_fraction, seed);
    Ok((train.into_pyarray(py), test.into_pyarray(py)))
}

/// `usvm::model_selection::stratified_k_fold`: `k` seeded, stratified test folds partitioning
/// `0..len(labels)`, each sorted (the folds of the core's cross-validation).
#[pyfunction]
#[pyo3(signature = (labels, k, seed=0))]
fn stratified_k_fold<'py>(
    py: Python<'py>,
    labels: PyReadonlyArray1<'py, i64>,
    k: usize,
    seed: u64,
) -> PyResult<Vec<Indices<'py>>> {
    if k < 1 {
        return Err(PyValueError::new_err("k must be at least 1"));
    }
    let labels = labels.as_array().to_vec();
    Ok(usvm::model_selection::stratified_k_fold(&labels, k, seed).into_iter().map(|f| f.into_pyarray(py)).collect())
}

#[pymodule]
fn _usvm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(objective, m)?)?;
    m.add_function(wrap_pyfunction!(fit_platt, m)?)?;
    m.add_function(wrap_pyfunction!(stratified_split, m)?)?;
    m.add_function(wrap_pyfunction!(stratified_k_fold, m)?)?;
    uncertainty::register(m)?;
    besvm::register(m)?;
    plot::register(m)?;
    svm_plus::register(m)?;
    registry::register(m)?;
    sharded::register(m)?;
    Ok(())
}
