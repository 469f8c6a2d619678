//! One shard: a part of the rows (means, labels, weights, covariances) answering the driver's questions
//! with partial sums of the data term, by the same code as the local objective ([`Objective`]'s `data_*`
//! methods).

use serde::{Deserialize, Serialize};

use super::dual_round::{Rows, Shift};
use super::protocol::{Answer, AtStep, DualRound, DualState, Point, Question, ShardInfo, Target};
use super::{Plan, Treatment};
use crate::covariance::Covariances;
use crate::data::{Dataset, Features, norm2};
use crate::error::{Error, Result, invalid};
use crate::loss::ExpectedHinge;
use crate::model::Model;
use crate::objective::{Curvature, LineTerms, Objective, Problem};
use crate::ovr;
use crate::params::MethodParams;
use crate::solver::newton::{DIRECT_MAX_DIM, conjugate_gradient};
use crate::svm::alternating::shift_points;
use crate::svm::transform::power_radii;

/// A part of the training rows, prepared for the method, with what it computed at the last point asked
/// (so that the Hessian-vector products of one Newton step, or the steps of one line search, reuse it).
/// It serialises as its rows alone, so that an engine can move it between workers.
#[derive(Serialize, Deserialize)]
pub struct Shard {
    features: Features<'static>,
    labels: Vec<i64>,
    weights: Option<Vec<f64>>,
    covariances: Covariances,
    fit_intercept: bool,
    /// Power SVM: the radii `r_i` of the balls.
    radii: Option<Vec<f64>>,
    /// `±1` labels of the last binary problem asked about.
    #[serde(skip)]
    signs: (i64, Vec<f64>),
    /// Power SVM: the rows moved for the last [`Target::Moved`] asked about.
    #[serde(skip)]
    moved: Option<Moved>,
    /// The curvature at the last `ValueGrad` point.
    #[serde(skip)]
    curvature: Option<(Point, Curvature)>,
    /// The line terms of the last `Line` question.
    #[serde(skip)]
    line: Option<(Point, Vec<f64>, LineTerms<ExpectedHinge>)>,
    /// The multipliers of the distributed dual method ([`Question::Dual`]), when the shard keeps them.
    #[serde(skip)]
    dual: Option<DualState>,
}

impl Shard {
    /// The rows of `data` (any number, any labels) for a sharded fit of `params`: checked row by row
    /// ([`Dataset::validate_rows`]) and prepared as the method prepares them (LSVM-iso's isotropic
    /// covariances, LSVM's none).
    pub fn new(params: &MethodParams, data: Dataset<'_>) -> Result<Shard> {
        let plan = Plan::of(params)?;
        data.validate_rows()?;
        let (l, n) = (data.n_samples(), data.n_features());
        let mut radii = None;
        let covariances = match plan.treatment {
            Treatment::AsGiven => data.covariances,
            Treatment::Isotropic => data.covariances.to_isotropic(l, n),
            Treatment::Ignored => Covariances::None,
            Treatment::Power { radius_scale, .. } => {
                let squared = power_radii(&data, radius_scale)?;
                let Covariances::Isotropic(c) = &squared else { unreachable!("power_radii returns isotropic radii") };
                radii = Some(c.variances.iter().map(|v| v.sqrt()).collect());
                Covariances::None
            }
        };
        Ok(Shard {
            features: data.features.into_owned(),
            labels: data.labels.into_owned(),
            weights: data.weights,
            covariances,
            fit_intercept: plan.linear.fit_intercept,
            radii,
            moved: None,
            signs: (0, Vec::new()),
            curvature: None,
            line: None,
            dual: None,
        })
    }

    /// The number of rows.
    pub fn n_samples(&self) -> usize {
        self.labels.len()
    }

    /// How many of its rows `model` classifies as labelled (held-out scoring without moving the rows).
    pub fn correct(&self, model: &Model) -> Result<usize> {
        if self.labels.is_empty() {
            return Ok(0);
        }
        let predicted = model.predict(&self.features)?;
        Ok(predicted.iter().zip(&self.labels).filter(|(p, y)| p == y).count())
    }

    /// `Σ c_i` over its rows.
    fn weight_sum(&self) -> f64 {
        self.weights.as_ref().map_or(self.n_samples() as f64, |w| w.iter().sum())
    }

    fn dim(&self) -> usize {
        self.features.n_features() + usize::from(self.fit_intercept)
    }

    /// Answers `question` with this shard's partial sums, keeping the multipliers of [`Question::Dual`]
    /// itself (see [`Self::answer_with_state`]).
    pub fn answer(&mut self, question: &Question) -> Result<Answer> {
        if matches!(question, Question::Dual(_)) {
            let state = self.dual.take();
            let (state, answer) = self.answer_with_state(state, question)?;
            self.dual = state;
            return Ok(answer);
        }
        self.answer_with_state(None, question).map(|(_, a)| a)
    }

    /// Answers `question` from the dual method's multipliers `state` (ignored by every question but
    /// [`Question::Dual`]) and returns them updated: for an engine whose tasks keep no state (Dask passes
    /// the state from round to round as a task result, which it recomputes from its lineage when lost).
    pub fn answer_with_state(
        &mut self,
        state: Option<DualState>,
        question: &Question,
    ) -> Result<(Option<DualState>, Answer)> {
        if let Question::Dual(round) = question {
            return self.dual_round(state, round).map(|(s, a)| (Some(s), a));
        }
        self.answer_stateless(question).map(|a| (state, a))
    }

    fn dual_round(&mut self, state: Option<DualState>, round: &DualRound) -> Result<(DualState, Answer)> {
        let at = &round.at;
        if at.theta.len() != self.dim() {
            return Err(Error::DimensionMismatch { what: "θ", expected: self.dim(), found: at.theta.len() });
        }
        self.ensure_signs(at.positive);
        self.ensure_target(at, true)?;
        let mut state = match state {
            _ if round.round == 0 => {
                DualState { solve: round.solve, rounds: 0, positive: at.positive, alpha: vec![0.0; self.n_samples()] }
            }
            Some(s) if s.solve == round.solve && s.rounds == round.round && s.positive == at.positive => s,
            other => {
                let had = other.map_or("none".to_string(), |s| format!("solve {} after {} rounds", s.solve, s.rounds));
                return Err(Error::SolverFailure {
                    solver: "sharded dual method",
                    detail: format!(
                        "a shard's multipliers are out of step: round {} of solve {} asked, the shard has {had}",
                        round.round, round.solve
                    ),
                });
            }
        };
        let answer = self.rows(at, false).dual_round(round, &mut state.alpha);
        state.rounds += 1;
        Ok((state, Answer::Dual(answer)))
    }

    /// The rows of `at`'s binary problem and target, for the dual method; for the exact finish's questions
    /// (`shifted`) Power SVM's moved rows as the rows and their shift.
    fn rows(&self, at: &Point, shifted: bool) -> Rows<'_> {
        let p = self.problem(at);
        let shift = match (&at.target, &self.moved) {
            (Target::Moved { .. }, Some(m)) if shifted => Some(Shift { along: &m.w, by: &m.by }),
            _ => None,
        };
        let x = if shift.is_some() { &self.features } else { p.features };
        Rows { x, y: p.y, c: p.weights, fit_intercept: self.fit_intercept, shift }
    }

    fn answer_stateless(&mut self, question: &Question) -> Result<Answer> {
        let dim = self.dim();
        let check = |what: &'static str, v: &[f64]| {
            if v.len() == dim { Ok(()) } else { Err(Error::DimensionMismatch { what, expected: dim, found: v.len() }) }
        };
        if let Some(at) = question.at() {
            self.ensure_signs(at.positive);
            // The exact finish's questions need no moved rows formed.
            self.ensure_target(at, !matches!(question, Question::Margin { .. }))?;
        }
        match question {
            Question::Describe => {
                let mut classes = self.labels.clone();
                classes.sort_unstable();
                classes.dedup();
                let weight_sum = self.weight_sum();
                let squared_norms = (0..self.n_samples()).map(|i| self.features.row_norm2(i)).sum();
                Ok(Answer::Describe(ShardInfo {
                    n_samples: self.n_samples(),
                    squared_norms,
                    n_features: self.features.n_features(),
                    dim,
                    classes,
                    weight_sum,
                }))
            }
            Question::ValueGrad { at, hessian } => {
                check("θ", &at.theta)?;
                hessian_fits(*hessian, dim)?;
                let AtStep { value, grad, hessian } = self.sums_at(at.clone(), *hessian);
                Ok(Answer::ValueGrad { value, grad, hessian })
            }
            Question::HessVec { at, v } => {
                check("θ", &at.theta)?;
                check("v", v)?;
                if self.curvature.as_ref().is_none_or(|(p, _)| p != at) {
                    // A re-created shard, or a question out of order: recompute the curvature at `at`.
                    let curvature = self.value_grad(at).2;
                    self.curvature = Some((at.clone(), curvature));
                }
                let (_, curvature) = self.curvature.as_ref().expect("set above");
                let mut product = vec![0.0; dim];
                self.objective(at).data_hess_vec(&at.theta, curvature, v, &mut product);
                Ok(Answer::HessVec { product })
            }
            Question::LocalNewton { at, gradient, data_scale, lambda, forcing } => {
                check("θ", &at.theta)?;
                check("gradient", gradient)?;
                let weight = self.weight_sum();
                let mut direction = vec![0.0; dim];
                if weight > 0.0 {
                    if self.curvature.as_ref().is_none_or(|(p, _)| p != at) {
                        let curvature = self.value_grad(at).2;
                        self.curvature = Some((at.clone(), curvature));
                    }
                    let (_, curvature) = self.curvature.as_ref().expect("set above");
                    let objective = self.objective(at);
                    let (n, scale) = (self.features.n_features(), data_scale / weight);
                    let hess_vec = |v: &[f64], out: &mut [f64]| {
                        objective.data_hess_vec(&at.theta, curvature, v, out);
                        out.iter_mut().for_each(|o| *o *= scale);
                        crate::data::axpy(*lambda, &v[..n], &mut out[..n]);
                    };
                    conjugate_gradient(&hess_vec, gradient, *forcing, &mut direction);
                }
                Ok(Answer::LocalNewton { direction, weight })
            }
            Question::Line { at, direction, steps, with_gradient } => {
                check("θ", &at.theta)?;
                check("direction", direction)?;
                if self.line.as_ref().is_none_or(|(p, d, _)| p != at || d != direction) {
                    let terms = self.objective(at).line_terms(&at.theta, direction);
                    self.line = Some((at.clone(), direction.clone(), terms));
                }
                let (_, _, terms) = self.line.as_ref().expect("set above");
                let values = steps.iter().map(|&alpha| terms.eval(alpha)).collect();
                let at_one = with_gradient.then(|| {
                    // `θ + 1·d` as the driver's `axpy` forms it.
                    let theta = at.theta.iter().zip(direction).map(|(t, d)| t + 1.0 * d).collect();
                    self.sums_at(Point { theta, ..at.clone() }, dim <= DIRECT_MAX_DIM)
                });
                Ok(Answer::Line { values, at_one })
            }
            Question::Exact { at, next } => {
                check("θ", &at.theta)?;
                hessian_fits(next.is_some_and(|s| s.hessian), dim)?;
                let (value, min_sigma) = self.objective(at).data_exact(&at.theta);
                // The next stage's first sums, as its `ValueGrad` would give them.
                let next = next.map(|stage| self.sums_at(Point { floor: stage.floor, ..at.clone() }, stage.hessian));
                Ok(Answer::Exact { value, min_sigma, next })
            }
            Question::Margin { at, band, max_rows, origin, steps, also } => {
                check("θ", &at.theta)?;
                if !origin.is_empty() {
                    check("origin", origin)?;
                }
                if !matches!(self.covariances, Covariances::None) {
                    return Err(invalid("question", "Margin", "is the plain hinge's; this shard has covariances"));
                }
                let also_by = self.shift_of(also)?;
                let also = also_by.as_ref().map(|by| Shift { along: also, by });
                let rows = self.rows(at, true);
                Ok(Answer::Margin(rows.margin(&at.theta, *band, *max_rows, origin, steps, also.as_ref())))
            }
            Question::Dual(_) => unreachable!("answered with its state"),
        }
    }

    /// The `±1` labels of problem `positive` (computed once per problem).
    fn ensure_signs(&mut self, positive: i64) {
        if self.signs.0 != positive || self.signs.1.len() != self.labels.len() {
            self.signs = (positive, ovr::signs(&self.labels, positive));
        }
    }

    /// Checks that `at.target` is one this shard has (the moved targets are Power SVM's), and moves the
    /// rows for a new [`Target::Moved`] (once per `w`; forming them only if `formed`).
    fn ensure_target(&mut self, at: &Point, formed: bool) -> Result<()> {
        let (Target::Moved { w }, radii) = (&at.target, &self.radii) else { return Ok(()) };
        let Some(radii) = radii else {
            return Err(invalid("target", "Moved", "is Power SVM's; this shard is another method's"));
        };
        let n = self.features.n_features();
        if w.len() != n {
            return Err(Error::DimensionMismatch { what: "w", expected: n, found: w.len() });
        }
        if self.moved.as_ref().is_none_or(|m| m.positive != at.positive || m.w != *w) {
            let by = shift_by(&self.signs.1, radii, w);
            self.moved = Some(Moved { positive: at.positive, w: w.clone(), by, rows: None });
        }
        let moved = self.moved.as_mut().expect("set above");
        if formed && moved.rows.is_none() {
            moved.rows = Some(shift_points(&self.features, &self.signs.1, radii, w));
        }
        Ok(())
    }

    /// The `a_i` of the rows moved for `w` (`None` for an empty `w`: no such target), after
    /// [`Self::ensure_target`] of the question's own point.
    fn shift_of(&self, w: &[f64]) -> Result<Option<Vec<f64>>> {
        if w.is_empty() {
            return Ok(None);
        }
        let Some(radii) = &self.radii else {
            return Err(invalid("also", "a moved target", "is Power SVM's; this shard is another method's"));
        };
        let n = self.features.n_features();
        if w.len() != n {
            return Err(Error::DimensionMismatch { what: "also", expected: n, found: w.len() });
        }
        Ok(Some(shift_by(&self.signs.1, radii, w)))
    }

    /// The rows, labels and covariances of `at`'s binary problem and target (after [`Self::ensure_target`];
    /// a Power SVM shard has no covariances but its balls).
    fn problem(&self, at: &Point) -> Problem<'_> {
        debug_assert_eq!(self.signs.0, at.positive);
        let features = match (&at.target, &self.moved) {
            (Target::Moved { .. }, Some(Moved { rows: Some(rows), .. })) => rows,
            _ => &self.features,
        };
        Problem { features, y: &self.signs.1, weights: self.weights.as_deref(), covariances: self.covariances.as_dyn() }
    }

    fn objective(&self, at: &Point) -> Objective<'_, ExpectedHinge> {
        Objective {
            fit_intercept: self.fit_intercept,
            sigma_floor: at.floor,
            ..Objective::new(self.problem(at), ExpectedHinge, 0.0)
        }
    }

    /// `Σ c_i L_i`, `Σ c_i ∇L_i` and, with `hessian`, `Σ c_i ∇²L_i` at `at`; its curvature kept for the
    /// Hessian-vector products that follow.
    fn sums_at(&mut self, at: Point, hessian: bool) -> AtStep {
        let (value, grad, curvature) = self.value_grad(&at);
        let hessian = if hessian { self.hessian(&at, &curvature) } else { Vec::new() };
        self.curvature = Some((at, curvature));
        AtStep { value, grad, hessian }
    }

    fn value_grad(&self, at: &Point) -> (f64, Vec<f64>, Curvature) {
        let mut grad = vec![0.0; self.dim()];
        let (value, curvature) = self.objective(at).data_value_grad(&at.theta, &mut grad);
        (value, grad, curvature)
    }

    /// `Σ c_i ∇²L_i`, column-major (as the local direct solve forms it).
    fn hessian(&self, at: &Point, curvature: &Curvature) -> Vec<f64> {
        let dim = self.dim();
        let mut out = vec![0.0; dim * dim];
        self.objective(at).data_hessian(&at.theta, curvature, &mut out);
        out
    }
}

/// `a_i = y_i r_i/‖w‖` of the rows moved for `w` (0 for `w = 0`: unmoved), as `shift_points` forms them.
fn shift_by(y: &[f64], radii: &[f64], w: &[f64]) -> Vec<f64> {
    let norm = norm2(w);
    y.iter().zip(radii).map(|(y, r)| if norm > 0.0 { y * r / norm } else { 0.0 }).collect()
}

/// Power SVM's rows moved for the direction of `w` in binary problem `positive`, `x_i + a_i w` with
/// `a_i = y_i r_i/‖w‖` (`by`); formed (`rows`) only once a question other than the exact finish's asks.
struct Moved {
    positive: i64,
    w: Vec<f64>,
    by: Vec<f64>,
    rows: Option<Features<'static>>,
}

/// An error unless a Hessian, if `wanted`, is one the shard forms (at most 64 variables: `dim²` numbers).
fn hessian_fits(wanted: bool, dim: usize) -> Result<()> {
    if wanted && dim > DIRECT_MAX_DIM {
        return Err(invalid("hessian", dim, "is formed only up to 64 variables (dim² numbers)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharded::MarginAnswer;

    #[test]
    fn the_finish_sees_moved_rows_without_forming_them_and_a_second_target_in_the_same_pass() {
        // A Margin question about moved rows, answered from the rows and their shift, against the same
        // question answered on the moved rows formed (as the other questions use them).
        let (l, n) = (60, 4);
        let x = ndarray::Array2::from_shape_fn((l, n), |(i, j)| ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0);
        let labels: Vec<i64> = (0..l).map(|i| (i % 3 == 0) as i64).collect();
        let variances = (0..l).map(|i| 0.1 + (i % 5) as f64 / 10.0).collect();
        let data = Dataset::dense(x, labels).with_covariances(Covariances::isotropic(variances));
        let mut shard = Shard::new(&MethodParams::default_for("power").unwrap(), data).unwrap();
        let target = Target::Moved { w: vec![0.3, -0.5, 0.2, 0.4] };
        let at = Point { positive: 1, theta: vec![0.2, -0.4, 0.3, 0.1, 0.05], floor: 0.0, target };
        let question = |max_rows| Question::Margin {
            at: at.clone(),
            band: 0.8,
            max_rows,
            origin: vec![0.1, 0.1, -0.1, 0.2, 0.0],
            steps: vec![0.5, 0.25],
            also: vec![],
        };
        for max_rows in [5, 1000] {
            let Answer::Margin(shifted) = shard.answer(&question(max_rows)).unwrap() else { panic!() };
            assert!(shard.moved.as_ref().unwrap().rows.is_none(), "Margin formed the moved rows");
            shard.ensure_target(&at, true).unwrap();
            let Question::Margin { band, origin, steps, .. } = question(max_rows) else { unreachable!() };
            let formed = shard.rows(&at, false).margin(&at.theta, band, max_rows, &origin, &steps, None);
            let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(u, v)| (u - v).abs() <= 1e-12 * (1.0 + v.abs()));
            let MarginAnswer { hinge, line, rows, y, c, active_sums, active_weights, .. } = shifted;
            assert!(close(&[hinge], &[formed.hinge]) && close(&line, &formed.line));
            assert_eq!((y, c, active_weights), (formed.y, formed.c, formed.active_weights));
            assert!(
                rows.n_samples() > 0
                    && close(rows.to_dense().as_slice().unwrap(), formed.rows.to_dense().as_slice().unwrap())
            );
            for (sums, expected) in active_sums.iter().zip(&formed.active_sums) {
                assert!(close(sums, expected));
            }
            shard.moved.as_mut().unwrap().rows = None;
        }
        // With `also`, the same pass gives another moved target's hinge at θ, as its own question would.
        let other = vec![-0.2, 0.1, 0.6, -0.3];
        let on = |target: Target, also: Vec<f64>| Question::Margin {
            at: Point { target, ..at.clone() },
            band: 0.8,
            max_rows: 5,
            origin: vec![],
            steps: vec![],
            also,
        };
        let Answer::Margin(both) = shard.answer(&on(at.target.clone(), other.clone())).unwrap() else { panic!() };
        let Answer::Margin(alone) = shard.answer(&on(Target::Moved { w: other }, vec![])).unwrap() else { panic!() };
        assert!((both.also_hinge - alone.hinge).abs() <= 1e-12 * alone.hinge && alone.hinge > 0.0);
        let Answer::Margin(own) = shard.answer(&on(at.target.clone(), vec![])).unwrap() else { panic!() };
        assert_eq!((both.hinge, own.also_hinge), (own.hinge, 0.0));
    }
}
