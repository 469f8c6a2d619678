//! The driver: the local exact solver over the sums of the shards' answers.

use std::cell::{Cell, RefCell};

use super::protocol::{Answer, AtStep, NextStage, Point, Question, ShardInfo, Target};
use super::shard::Shard;
use super::{Plan, Treatment};
use crate::data::{axpy, dot, norm2};
use crate::error::{Error, Result};
use crate::linalg::columns_from_products;
use crate::methods::{Fit, FitOptions, Regularization};
use crate::model::{LinearModel, Model};
use crate::ovr;
use crate::params::MethodParams;
use crate::progress::Monitor;
use crate::report::{FitReport, Termination};
use crate::solver::exact::{self, Continuation};
use crate::solver::newton::{self, DIRECT_MAX_DIM, LineGrid, SmoothFunction};
use crate::svm::{POWER_TOL, alternating};

/// A grid line search covers at most this many times `max(‖x‖, 1)` of its direction.
const GRID_REACH: f64 = 1e3;

/// The transport between the driver and the shards: asks every shard the same question and returns their
/// answers **in shard order**. An engine implements it (re-creating a lost shard from its partition and
/// asking again); a `Vec` of local [`Shard`]s is one too.
pub trait Shards {
    /// Every shard's answer to `question`, in shard order; an error names the shard.
    fn ask(&mut self, question: &Question) -> Result<Vec<Answer>>;
}

impl Shards for Vec<Shard> {
    fn ask(&mut self, question: &Question) -> Result<Vec<Answer>> {
        self.iter_mut()
            .enumerate()
            .map(|(index, s)| s.answer(question).map_err(|e| Error::Shard { index, detail: e.to_string() }))
            .collect()
    }
}

/// What a sharded fit exchanged with its shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Questions asked (each to every shard at once: one round trip).
    pub rounds: usize,
    /// Bytes of numbers sent to the shards (each question counted once per shard).
    pub bytes_sent: u64,
    /// Bytes of numbers received from the shards.
    pub bytes_received: u64,
}

/// A sharded fit: the model and reports of a local fit, and what it cost in communication.
#[derive(Debug, Clone)]
pub struct ShardedFit {
    /// The model and one report per binary problem.
    pub fit: Fit,
    /// The number of shards.
    pub n_shards: usize,
    /// Rows over all shards.
    pub n_samples: usize,
    /// Rounds per binary problem (the first, `Describe`, is counted in [`Self::traffic`] only).
    pub rounds: Vec<usize>,
    /// Everything exchanged.
    pub traffic: Traffic,
}

/// Fits `params` (`gsu`, `iso`, `hinge` or `power` with the exact solver) on the rows held by `shards`:
/// binary for two classes (the larger label positive), one-vs-rest otherwise — the local fit's model, up to
/// the order of floating-point additions (`hinge` and `power`: up to the tolerance of the local dual
/// solver, see the module documentation). `options.start` warm-starts from a model (a nearby λ of a path),
/// as locally.
pub fn fit_sharded(params: &MethodParams, shards: &mut dyn Shards, options: &FitOptions) -> Result<ShardedFit> {
    let plan = Plan::of(params)?;
    let mut driver = Driver {
        shards: RefCell::new(shards),
        traffic: Cell::default(),
        failure: RefCell::new(None),
        n_shards: 0,
        rho: 0.0,
        solves: Cell::new(0),
        weight_sum: 0.0,
        n_samples: 0,
        ahead: RefCell::new(None),
        kept: RefCell::new(None),
        last_step: Cell::new(None),
    };
    let infos: Vec<ShardInfo> = driver
        .ask(&Question::Describe)?
        .into_iter()
        .enumerate()
        .map(|(index, a)| match a {
            Answer::Describe(info) => Ok(info),
            _ => Err(Error::Shard { index, detail: "answered Describe with another answer".into() }),
        })
        .collect::<Result<_>>()?;
    let whole = describe_whole(&infos, plan.linear.fit_intercept)?;
    driver.n_shards = infos.len();
    driver.weight_sum = whole.weight_sum;
    driver.n_samples = whole.n_samples;
    // The dual method's penalty on `yᵀα`: a constant feature at the scale of the rows, as locally.
    driver.rho = infos.iter().map(|i| i.squared_norms).sum::<f64>() / whole.n_samples as f64;
    params.validate(whole.n_samples)?;
    let lambda = plan.linear.regularization.lambda(whole.n_samples)?;
    // The data term's normaliser: the weighted mean `1/Σc` for λ, as `usvm::fit` (which rescales the
    // weights to mean one instead); `1/ℓ` for C, whose `λ = 1/(Cℓ)` makes it `C Σ c_i L_i`.
    let inv_l = match plan.linear.regularization {
        Regularization::Lambda(_) => 1.0 / whole.weight_sum,
        Regularization::C(_) => 1.0 / whole.n_samples as f64,
    };
    let n = whole.n_features;
    let start = match options.start {
        Some(Model::Linear(m)) if m.classes == whole.classes && m.n_features() == n => Some(m),
        _ => None,
    };
    let mut rounds = Vec::new();
    let solved = ovr::positives(&whole.classes)
        .into_iter()
        .enumerate()
        .map(|(k, positive)| {
            let before = driver.traffic.get().rounds;
            let objective = ShardedObjective {
                driver: &driver,
                positive,
                lambda,
                n,
                fit_intercept: plan.linear.fit_intercept,
                inv_l,
                target: Target::Method,
                giant: whole.dim > DIRECT_MAX_DIM,
                grid_line: whole.dim > DIRECT_MAX_DIM,
            };
            let x0 = start.map(|m| m.theta(k, plan.linear.fit_intercept));
            let (mut theta, report) = match plan.treatment {
                Treatment::Power { max_rounds, .. } => objective.power(x0, max_rounds, &plan.settings),
                Treatment::Ignored => objective.hinge_by_dual(&plan.settings, x0),
                _ => exact::continuation(
                    &objective,
                    x0.unwrap_or_else(|| vec![0.0; whole.dim]),
                    &plan.settings,
                    Monitor::default(),
                ),
            };
            if let Some(e) = driver.failure.take() {
                return Err(e);
            }
            rounds.push(driver.traffic.get().rounds - before);
            let intercept = if plan.linear.fit_intercept { theta[n] } else { 0.0 };
            theta.truncate(n);
            Ok(ovr::Binary { coef: theta, intercept, report })
        })
        .collect::<Result<Vec<ovr::Binary<FitReport>>>>()?;
    let s = ovr::stack(whole.classes, n, solved);
    let model = Model::Linear(LinearModel { classes: s.classes, coef: s.coef.into(), intercept: s.intercept });
    if !model.is_finite() {
        return Err(Error::SolverFailure {
            solver: params.name(),
            detail: "the fitted model has non-finite coefficients (an overflow: rescale the features)".into(),
        });
    }
    Ok(ShardedFit {
        fit: Fit::new(model, s.reports),
        n_shards: infos.len(),
        n_samples: whole.n_samples,
        rounds,
        traffic: driver.traffic.get(),
    })
}

/// The whole data as the shards describe it, after checking that they agree.
fn describe_whole(infos: &[ShardInfo], fit_intercept: bool) -> Result<ShardInfo> {
    let Some(first) = infos.first() else { return Err(Error::Empty("no shards")) };
    for (index, info) in infos.iter().enumerate() {
        if info.n_features != first.n_features {
            return Err(Error::Shard {
                index,
                detail: format!("{} features, but partition 0 has {}", info.n_features, first.n_features),
            });
        }
        if info.dim != first.n_features + usize::from(fit_intercept) {
            return Err(Error::Shard { index, detail: "built with other parameters (fit_intercept)".into() });
        }
    }
    let n_samples = infos.iter().map(|i| i.n_samples).sum();
    if n_samples == 0 {
        return Err(Error::Empty("no training examples"));
    }
    if first.n_features == 0 {
        return Err(Error::Empty("no features"));
    }
    let weight_sum = infos.iter().map(|i| i.weight_sum).sum::<f64>();
    if weight_sum == 0.0 {
        return Err(Error::InvalidWeight { index: 0, value: 0.0 });
    }
    let mut classes: Vec<i64> = infos.iter().flat_map(|i| i.classes.iter().copied()).collect();
    classes.sort_unstable();
    classes.dedup();
    if classes.len() < 2 {
        return Err(Error::SingleClass { label: classes[0] });
    }
    let squared_norms = infos.iter().map(|i| i.squared_norms).sum();
    Ok(ShardInfo { n_samples, squared_norms, n_features: first.n_features, dim: first.dim, classes, weight_sum })
}

/// The shards, the traffic so far, and the first failure (after which nothing more is asked).
pub(super) struct Driver<'s> {
    shards: RefCell<&'s mut dyn Shards>,
    traffic: Cell<Traffic>,
    failure: RefCell<Option<Error>>,
    /// How many shards.
    pub(super) n_shards: usize,
    /// The mean `‖x_i‖²`: the dual method's penalty on `yᵀα` ([`super::cocoa`]).
    pub(super) rho: f64,
    /// Solves of the dual method so far (each new one starts the shards' multipliers afresh).
    solves: Cell<u64>,
    /// `Σ c_i` over all shards.
    pub(super) weight_sum: f64,
    /// A stage's first sums brought along by the last stage's `Exact` round, for the point they are at.
    ahead: RefCell<Option<(Point, ValueGrad)>>,
    /// The answers to a question asked ahead of the solver that will ask it ([`Self::keep`]).
    kept: RefCell<Option<(Question, Vec<Answer>)>>,
    /// The step the last one-round line search took ([`Stage::line_minimum`]), if not from `w = 0`.
    last_step: Cell<Option<f64>>,
    /// Rows over all shards.
    pub(super) n_samples: usize,
}

impl Driver<'_> {
    /// One round: `question` to every shard. After a failure (kept for the caller) nothing more is asked.
    fn ask(&self, question: &Question) -> Result<Vec<Answer>> {
        if self.failure.borrow().is_some() {
            return Err(Error::SolverFailure { solver: "sharded fit", detail: "a shard failed".into() });
        }
        let answers = self.shards.borrow_mut().ask(question)?;
        let mut t = self.traffic.get();
        t.rounds += 1;
        t.bytes_sent += question.payload_bytes() * answers.len() as u64;
        t.bytes_received += answers.iter().map(Answer::payload_bytes).sum::<u64>();
        self.traffic.set(t);
        Ok(answers)
    }

    /// A new solve of the dual method.
    pub(super) fn next_solve(&self) -> u64 {
        let s = self.solves.get();
        self.solves.set(s + 1);
        s
    }

    /// Rounds so far.
    pub(super) fn rounds(&self) -> usize {
        self.traffic.get().rounds
    }

    /// Whether a question failed.
    pub(super) fn failed(&self) -> bool {
        self.failure.borrow().is_some()
    }

    /// [`Self::ask`] inside the solver, which cannot stop on an error: the first error is kept (the fit
    /// returns it) and `None` makes the solver see NaN, which ends every loop at once.
    pub(super) fn ask_in_solver(&self, question: &Question) -> Option<Vec<Answer>> {
        match self.ask(question) {
            Ok(a) => Some(a),
            Err(e) => {
                self.failure.borrow_mut().get_or_insert(e);
                None
            }
        }
    }

    /// Keeps `answers` to `question` for the next [`Self::ask_kept`] of it.
    pub(super) fn keep(&self, question: Question, answers: Vec<Answer>) {
        *self.kept.borrow_mut() = Some((question, answers));
    }

    /// The answers kept by [`Self::keep`] if they are to `question` (without a round), else
    /// [`Self::ask_in_solver`]. Only for questions whose answers depend on nothing but the question.
    pub(super) fn ask_kept(&self, question: &Question) -> Option<Vec<Answer>> {
        match self.kept.borrow_mut().take() {
            Some((asked, answers)) if asked == *question => Some(answers),
            _ => self.ask_in_solver(question),
        }
    }

    pub(super) fn fail(&self, index: usize, detail: &str) {
        self.failure.borrow_mut().get_or_insert(Error::Shard { index, detail: detail.into() });
    }
}

/// One binary problem of the sharded objective `λ/2‖w‖² + inv_l Σ_shards (partial sum)`, of `target`.
pub(super) struct ShardedObjective<'d, 's> {
    pub(super) driver: &'d Driver<'s>,
    pub(super) positive: i64,
    pub(super) lambda: f64,
    pub(super) n: usize,
    pub(super) fit_intercept: bool,
    pub(super) inv_l: f64,
    pub(super) target: Target,
    /// Newton directions by GIANT (above [`DIRECT_MAX_DIM`] variables, where the local fit's conjugate
    /// gradients would cost a round per Hessian-vector product).
    pub(super) giant: bool,
    /// One-round line searches that bring the full step's derivatives along (with GIANT, and for the
    /// hinge's smoothed start): no local steps to reproduce.
    pub(super) grid_line: bool,
}

impl ShardedObjective<'_, '_> {
    pub(super) fn point(&self, theta: &[f64], floor: f64) -> Point {
        Point { positive: self.positive, theta: theta.to_vec(), floor, target: self.target.clone() }
    }

    /// Power SVM's alternating rounds (as `svm::alternating` runs them locally) from `x0`: each round the
    /// hinge fit on the points moved for the last `w` ([`Target::Moved`], moved by the shards), compared by
    /// the ball-hinge objective. That objective at `θ`, `Σ c_i max(0, d_i - r_i‖w‖)`, is the hinge at `θ` of
    /// the points moved for `θ` itself (`y_i(x_i + y_i r_i w/‖w‖)ᵀw = y_i x_iᵀw + r_i‖w‖`): the first
    /// question of the next round's finish, which keeps its answers.
    fn power(&self, x0: Option<Vec<f64>>, max_rounds: usize, settings: &exact::ExactSettings) -> (Vec<f64>, FitReport) {
        let retarget = |target| ShardedObjective { target, ..*self };
        let ball = |theta: &[f64]| retarget(Target::Moved { w: theta[..self.n].to_vec() }).first_finish_value(theta);
        let hinge = |moved_by: Option<&[f64]>, start: Option<Vec<f64>>, _monitor: Monitor<'_>| {
            let target = moved_by.map_or(Target::Method, |t| Target::Moved { w: t[..self.n].to_vec() });
            retarget(target).hinge_by_dual(settings, start)
        };
        let mut run = alternating::alternate_with(ball, x0, max_rounds, POWER_TOL, Monitor::default(), hinge);
        if !run.settled {
            run.report.termination = run.report.termination.and(Termination::MaxIterations);
        }
        (run.theta, run.report)
    }

    /// `(J(x), min σ_i)` at `ε = 0` ([`Continuation::exact`]), and with `next_floor` the sums of the
    /// `ValueGrad` at `x` and that floor (with the Hessian up to [`DIRECT_MAX_DIM`] variables, as the stage
    /// asks), kept for [`Self::value_grad`].
    fn exact_then(&self, x: &[f64], next_floor: Option<f64>) -> (f64, f64) {
        let dim = x.len();
        let hessian = dim <= DIRECT_MAX_DIM;
        let next = next_floor.map(|floor| NextStage { floor, hessian });
        let Some(answers) = self.driver.ask_in_solver(&Question::Exact { at: self.point(x, 0.0), next }) else {
            return (f64::NAN, f64::NAN);
        };
        let (mut value, mut min_sigma) = (0.0, f64::INFINITY);
        let h = if hessian { dim * dim } else { 0 };
        let mut ahead = next.map(|_| AtStep { value: 0.0, grad: vec![0.0; dim], hessian: vec![0.0; h] });
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::Exact { value: v, min_sigma: m, next: one }
                    if one.as_ref().map(|a| (a.grad.len(), a.hessian.len())) == ahead.as_ref().map(|_| (dim, h)) =>
                {
                    value += v;
                    min_sigma = min_sigma.min(m);
                    if let (Some(total), Some(one)) = (ahead.as_mut(), one) {
                        total.add(&one);
                    }
                }
                _ => {
                    self.driver.fail(index, "a malformed answer to Exact");
                    return (f64::NAN, f64::NAN);
                }
            }
        }
        if let (Some(floor), Some(AtStep { value, mut grad, mut hessian })) = (next_floor, ahead) {
            let value = self.total(x, value, &mut grad, &mut hessian);
            *self.driver.ahead.borrow_mut() = Some((self.point(x, floor), (value, grad, hessian)));
        }
        let w = &x[..self.n];
        (0.5 * self.lambda * dot(w, w) + value * self.inv_l, min_sigma)
    }

    /// `(J, ∇J, ∇²J or empty)` at `theta`, or NaNs after a failure; from the last `Exact` round when it
    /// brought these sums along ([`Self::exact_then`]).
    fn value_grad(&self, theta: &[f64], floor: f64, hessian: bool) -> (f64, Vec<f64>, Vec<f64>) {
        let dim = theta.len();
        let at = self.point(theta, floor);
        let kept = self.driver.ahead.borrow_mut().take();
        if let Some((_, sums)) = kept.filter(|(p, s)| *p == at && s.2.len() == if hessian { dim * dim } else { 0 }) {
            return sums;
        }
        let question = Question::ValueGrad { at, hessian };
        let (mut value, mut grad, mut h) = (0.0, vec![0.0; dim], vec![0.0; if hessian { dim * dim } else { 0 }]);
        let Some(answers) = self.driver.ask_in_solver(&question) else {
            return (f64::NAN, vec![f64::NAN; dim], vec![f64::NAN; h.len()]);
        };
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::ValueGrad { value: v, grad: g, hessian: hk } if g.len() == dim && hk.len() == h.len() => {
                    value += v;
                    axpy(1.0, &g, &mut grad);
                    axpy(1.0, &hk, &mut h);
                }
                _ => {
                    self.driver.fail(index, "a malformed answer to ValueGrad");
                    return (f64::NAN, vec![f64::NAN; dim], vec![f64::NAN; h.len()]);
                }
            }
        }
        let value = self.total(theta, value, &mut grad, &mut h);
        (value, grad, h)
    }

    /// `J`, and `∇J` and `∇²J` (if not empty) in place, at `theta` from the shards' summed `Σ c_i L_i`,
    /// `Σ c_i ∇L_i` and `Σ c_i ∇²L_i`.
    fn total(&self, theta: &[f64], value: f64, grad: &mut [f64], hessian: &mut [f64]) -> f64 {
        let w = &theta[..self.n];
        grad.iter_mut().for_each(|g| *g *= self.inv_l);
        axpy(self.lambda, w, &mut grad[..self.n]);
        hessian.iter_mut().for_each(|v| *v *= self.inv_l);
        if !hessian.is_empty() {
            let dim = grad.len();
            (0..self.n).for_each(|j| hessian[j * dim + j] += self.lambda);
        }
        0.5 * self.lambda * dot(w, w) + value * self.inv_l
    }
}

impl<'d, 's> Continuation for ShardedObjective<'d, 's> {
    type Stage<'a>
        = Stage<'a, 'd, 's>
    where
        Self: 'a;
    fn dim(&self) -> usize {
        self.n + usize::from(self.fit_intercept)
    }
    fn stage(&self, floor: f64) -> Stage<'_, 'd, 's> {
        Stage { objective: self, floor, at: Vec::new(), prefetched: RefCell::new(None), hessian: Vec::new() }
    }
    fn initial_gradient_norm(&self) -> f64 {
        norm2(&self.value_grad(&vec![0.0; self.dim()], 0.0, false).1)
    }
    fn exact(&self, x: &[f64]) -> (f64, f64) {
        self.exact_then(x, None)
    }
    /// With GIANT's directions, whose steps are not the local fit's anyway: a hundredfold per stage, as a
    /// stage costs rounds (at least a direction, a line search and `Exact`) rather than local work (GSU at
    /// 100 features: 19 rounds instead of 23–25, the objective as the local one's to 1e-11).
    fn stage_factor(&self) -> f64 {
        if self.giant { GIANT_STAGE_FACTOR } else { exact::STAGE_FACTOR }
    }
    /// One round for both: the next stage's first `ValueGrad` comes along with the `Exact` sums and waits in
    /// the driver for that stage (unless the floor jumps: then its compute, not a round, was spent).
    fn min_sigma_before(&self, x: &[f64], next_floor: f64) -> f64 {
        self.exact_then(x, Some(next_floor)).1
    }
}

/// `J`, `∇J` and `∇²J` (empty above 64 variables).
type ValueGrad = (f64, Vec<f64>, Vec<f64>);

/// The factor from one smoothing stage's floor to the next's with GIANT's directions.
const GIANT_STAGE_FACTOR: f64 = 0.01;

/// The sharded objective at one floor, as Newton's method sees it. Up to `n + 1 = 64` variables each
/// `value_grad` brings the Hessian along, so a Newton step costs one round plus its line search.
pub(super) struct Stage<'o, 'd, 's> {
    objective: &'o ShardedObjective<'d, 's>,
    floor: f64,
    at: Vec<f64>,
    /// `(θ + d, J, ∇J)` from the last line search's round (GIANT's: the full step's gradient comes with it).
    prefetched: RefCell<Option<(Vec<f64>, ValueGrad)>>,
    /// `∇²J` at `at`, column-major; empty when the dimension is above the direct solve's.
    hessian: Vec<f64>,
}

impl SmoothFunction for Stage<'_, '_, '_> {
    fn dim(&self) -> usize {
        self.objective.dim()
    }

    fn value_grad(&mut self, x: &[f64], grad: &mut [f64]) -> f64 {
        if let Some((at, (value, g, h))) = self.prefetched.take().filter(|(at, _)| at.as_slice() == x) {
            grad.copy_from_slice(&g);
            self.at = at;
            self.hessian = h;
            return value;
        }
        let (value, g, h) = self.objective.value_grad(x, self.floor, x.len() <= DIRECT_MAX_DIM);
        grad.copy_from_slice(&g);
        self.at = x.to_vec();
        self.hessian = h;
        value
    }

    fn hess_vec(&self, v: &[f64], out: &mut [f64]) {
        let dim = v.len();
        if self.hessian.len() == dim * dim {
            out.iter_mut().for_each(|o| *o = 0.0);
            for (j, column) in self.hessian.chunks(dim).enumerate() {
                axpy(v[j], column, out);
            }
            return;
        }
        let o = self.objective;
        let question = Question::HessVec { at: o.point(&self.at, self.floor), v: v.to_vec() };
        out.iter_mut().for_each(|x| *x = 0.0);
        let Some(answers) = o.driver.ask_in_solver(&question) else {
            out.iter_mut().for_each(|x| *x = f64::NAN);
            return;
        };
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::HessVec { product } if product.len() == dim => axpy(1.0, &product, out),
                _ => {
                    o.driver.fail(index, "a malformed answer to HessVec");
                    out.iter_mut().for_each(|x| *x = f64::NAN);
                    return;
                }
            }
        }
        out.iter_mut().for_each(|x| *x *= o.inv_l);
        axpy(o.lambda, &v[..o.n], &mut out[..o.n]);
    }

    /// Above [`DIRECT_MAX_DIM`] variables (no Hessian is sent): GIANT's direction (Wang et al. 2018), the
    /// average of the shards' Newton directions from their own rows' Hessians, weighted by their weights —
    /// one round, where conjugate gradients over the shards take one per product.
    fn newton_direction(&self, g: &[f64], forcing: f64, s: &mut [f64]) -> bool {
        let o = self.objective;
        if !o.giant {
            return false;
        }
        let question = Question::LocalNewton {
            at: o.point(&self.at, self.floor),
            gradient: g.to_vec(),
            data_scale: o.inv_l * o.driver.weight_sum,
            lambda: o.lambda,
            forcing,
        };
        s.iter_mut().for_each(|v| *v = 0.0);
        let Some(answers) = o.driver.ask_in_solver(&question) else {
            s.iter_mut().for_each(|v| *v = f64::NAN);
            return true;
        };
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::LocalNewton { direction, weight } if direction.len() == g.len() => {
                    axpy(weight / o.driver.weight_sum, &direction, s);
                }
                _ => {
                    o.driver.fail(index, "a malformed answer to LocalNewton");
                    s.iter_mut().for_each(|v| *v = f64::NAN);
                    return true;
                }
            }
        }
        true
    }

    fn hessian(&self, out: &mut [f64]) {
        if self.hessian.len() == out.len() {
            out.copy_from_slice(&self.hessian);
        } else {
            columns_from_products(self.dim(), out, |e, column| self.hess_vec(e, column));
        }
    }

    /// Each evaluation the line search asks for is one round, except that the first round of a line
    /// search also evaluates the steps `2⁻ʲ`, `j = 1…40`: the bisections the search takes when the Newton
    /// step `α = 1` overshoots by orders of magnitude (a first direction from `w = 0` needs `α ≈ 10⁻¹¹`),
    /// which would otherwise cost a round each. The search itself is unchanged; it finds those values cached.
    fn line<'s>(&'s self, x: &[f64], d: &[f64]) -> Box<dyn Fn(f64) -> (f64, f64, f64) + 's> {
        let o = self.objective;
        let (at, direction) = (o.point(x, self.floor), d.to_vec());
        let total = o.line_total(x, d);
        let known: RefCell<Vec<(f64, [f64; 3])>> = RefCell::new(Vec::new());
        Box::new(move |alpha| {
            let cached = known.borrow().iter().find(|(a, _)| a.to_bits() == alpha.to_bits()).map(|&(_, v)| v);
            let sum = match cached {
                Some(v) => v,
                None => {
                    let mut steps = vec![alpha];
                    if known.borrow().is_empty() {
                        // The line search's bisections from `α` with `lo = 0`: `0.5·(0 + α)`, …
                        (0..40).for_each(|_| steps.push(0.5 * (0.0 + steps[steps.len() - 1])));
                    }
                    let Some(sums) = o.line_sums(&at, &direction, &steps) else {
                        return (f64::NAN, f64::NAN, f64::NAN);
                    };
                    known.borrow_mut().extend(steps.iter().copied().zip(sums.iter().copied()));
                    sums[0]
                }
            };
            total(alpha, sum)
        })
    }

    /// With GIANT's directions ([`Self::newton_direction`]) or for the hinge's smoothed start
    /// ([`ShardedObjective::grid_line`]): one round, the best of a grid of steps
    /// ([`newton::line_grid_minimum`]: five steps around the last one taken, more in further rounds only if
    /// the minimiser lies beyond them), which also brings the derivatives at the full step;
    /// else the local fit's exact search, one step per round.
    fn line_minimum(&self, x: &[f64], d: &[f64], slope: f64) -> f64 {
        let o = self.objective;
        if !o.grid_line {
            return newton::line_minimum(&*self.line(x, d), slope);
        }
        // A direction far longer than the point (a nearly flat coordinate: the bias when every row is far
        // beyond the smoothed kink, curvature e^-50) is searched along its first GRID_REACH·max(‖x‖, 1) of
        // length: the grid's smallest step (~10⁻¹⁷) would be too long for it (100,000 × 20 at λ = 1e-5: a
        // direction of norm 10⁸¹, a step raising J to 10⁶³).
        let scale = (GRID_REACH * norm2(x).max(1.0) / norm2(d)).min(1.0);
        if scale < 1.0 {
            let shorter: Vec<f64> = d.iter().map(|v| v * scale).collect();
            return scale * self.grid_line_minimum(x, &shorter, slope * scale);
        }
        self.grid_line_minimum(x, d, slope)
    }
}

impl Stage<'_, '_, '_> {
    /// [`SmoothFunction::line_minimum`] on the grid.
    fn grid_line_minimum(&self, x: &[f64], d: &[f64], slope: f64) -> f64 {
        let o = self.objective;
        let at = o.point(x, self.floor);
        let total = o.line_total(x, d);
        // From w = 0 the loss has almost no curvature: the direction is a scaled gradient, its step anywhere
        // down to 10⁻¹¹ (not the full step, whose gradient is not asked for) and no guide to the Newton
        // steps after it.
        let cold = x[..o.n].iter().all(|&v| v == 0.0);
        let mut first = !cold;
        let mut phis = |steps: &[f64]| match o.line_sums_with(&at, d, steps, std::mem::take(&mut first)) {
            Some((sums, at_one)) => {
                if let Some(AtStep { value, mut grad, mut hessian }) = at_one {
                    let mut next = x.to_vec();
                    axpy(1.0, d, &mut next);
                    let value = o.total(&next, value, &mut grad, &mut hessian);
                    *self.prefetched.borrow_mut() = Some((next, (value, grad, hessian)));
                }
                steps.iter().zip(sums).map(|(&alpha, sum)| total(alpha, sum)).map(|(v, d, _)| (v, d)).collect()
            }
            None => vec![(f64::NAN, f64::NAN); steps.len()],
        };
        let grid = if cold {
            LineGrid::Cold
        } else {
            LineGrid::Around { last: o.driver.last_step.get().unwrap_or(1.0), slope }
        };
        let alpha = newton::line_grid_minimum(&mut phis, grid);
        o.driver.last_step.set((!cold).then_some(alpha));
        alpha
    }
}

impl ShardedObjective<'_, '_> {
    /// `(φ, φ', φ'')` at `α` along `x + α·d` from the shards' summed line terms `sum` at `α`: the data term
    /// scaled by `1/ℓ` plus the regulariser `λ/2‖w + α s‖²`.
    fn line_total(&self, x: &[f64], d: &[f64]) -> impl Fn(f64, [f64; 3]) -> (f64, f64, f64) + use<> {
        let (w, s) = (&x[..self.n], &d[..self.n]);
        let [ww, ws, ss] = [dot(w, w), dot(w, s), dot(s, s)];
        let (lambda, inv_l) = (self.lambda, self.inv_l);
        move |alpha, sum| {
            let reg = 0.5 * lambda * (ww + alpha * (2.0 * ws + alpha * ss));
            (reg + sum[0] * inv_l, lambda * (ws + alpha * ss) + sum[1] * inv_l, lambda * ss + sum[2] * inv_l)
        }
    }

    /// The shards' `[Σ L, Σ dL/dα, Σ d²L/dα²]` along `at + α·direction` at each step, summed in shard order;
    /// `None` after a failure.
    fn line_sums(&self, at: &Point, direction: &[f64], steps: &[f64]) -> Option<Vec<[f64; 3]>> {
        self.line_sums_with(at, direction, steps, false).map(|(sums, _)| sums)
    }

    /// [`Self::line_sums`], and with `with_gradient` the summed `(Σ c_i L_i, Σ c_i ∇L_i)` at `at + direction`.
    fn line_sums_with(
        &self,
        at: &Point,
        direction: &[f64],
        steps: &[f64],
        with_gradient: bool,
    ) -> Option<(Vec<[f64; 3]>, Option<AtStep>)> {
        let question =
            Question::Line { at: at.clone(), direction: direction.to_vec(), steps: steps.to_vec(), with_gradient };
        let answers = self.driver.ask_in_solver(&question)?;
        let mut sums = vec![[0.0; 3]; steps.len()];
        let dim = direction.len();
        let h = if dim <= DIRECT_MAX_DIM { dim * dim } else { 0 };
        let mut at_one = with_gradient.then(|| AtStep { value: 0.0, grad: vec![0.0; dim], hessian: vec![0.0; h] });
        for (index, a) in answers.into_iter().enumerate() {
            match a {
                Answer::Line { values, at_one: one }
                    if values.len() == steps.len()
                        && one.as_ref().map(|a| (a.grad.len(), a.hessian.len()))
                            == at_one.as_ref().map(|_| (dim, h)) =>
                {
                    for (sum, v) in sums.iter_mut().zip(&values) {
                        (0..3).for_each(|k| sum[k] += v[k]);
                    }
                    if let (Some(total), Some(one)) = (at_one.as_mut(), one) {
                        total.add(&one);
                    }
                }
                _ => {
                    self.driver.fail(index, "a malformed answer to Line");
                    return None;
                }
            }
        }
        Some((sums, at_one))
    }
}
