//! The dedicated SMO solver of `usvm::solver::svmplus_qp` against the generic conic solver Clarabel on the
//! SVM+ dual (paper 004 eq. 15 with λ = 0, σ' = ∞) of the synthetic LUPI task: time and objective.
//!
//! `cargo run --release -p usvm-experiments --example bench_svmplus [N ...] [--clarabel-limit SECONDS]`
//! (default N = 500 2000 5000, limit 600 s; Clarabel is skipped above 3000 examples unless
//! `--clarabel-all` is given; `--smo-only` skips it; `--c`, `--rho` set the
//! hyper-parameters, default 1 and 1 — its dense KKT factorisation needs O(n³) time and O(n²) memory.)
//!
//! Clarabel here gets the dual over (α, β) with one dense 2n × 2n `P`: a poor formulation of the same QP.
//! The fair peer (the auxiliary variable `t = α + β − C`, two dense n × n blocks) is timed by
//! `bench/svmplus_peers.py`; quote that one (bench/RESULTS.md).

use std::time::Instant;

use clarabel::algebra::CscMatrix;
use clarabel::solver::*;
use usvm::solver::svmplus_qp::{QpSettings, SvmPlusQp};
use usvm::svm::SvmPlusParams;
use usvm_experiments::lupi::LupiTask;

fn clarabel(qp: &SvmPlusQp<'_>, limit: f64) -> (f64, f64, String) {
    let n = qp.y.len();
    let r = 1.0 / qp.rho;
    let (mut colptr, mut rowval, mut nzval) = (vec![0], Vec::new(), Vec::new());
    for col in 0..2 * n {
        for row in 0..=col {
            let (i, j) = (row % n, col % n);
            let mut v = r * qp.b[[i, j]];
            if row < n && col < n {
                v += qp.y[i] * qp.y[j] * qp.a[[i, j]];
            }
            rowval.push(row);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(2 * n, 2 * n, colptr, rowval, nzval);
    let bc: Vec<f64> = (0..n).map(|i| (0..n).map(|j| qp.b[[i, j]] * qp.c[j]).sum::<f64>() * r).collect();
    let mut q: Vec<f64> = bc.iter().map(|v| -1.0 - v).collect();
    q.extend(bc.iter().map(|v| -v));
    let constant = 0.5 * (0..n).map(|i| qp.c[i] * bc[i]).sum::<f64>();
    // Sparse constraints: two equality rows, then −μ ≤ 0.
    let (mut ac, mut ar, mut av) = (vec![0], Vec::new(), Vec::new());
    for col in 0..2 * n {
        ar.push(0);
        av.push(1.0);
        if col < n {
            ar.push(1);
            av.push(qp.y[col]);
        }
        ar.push(2 + col);
        av.push(-1.0);
        ac.push(ar.len());
    }
    let a = CscMatrix::new(2 + 2 * n, 2 * n, ac, ar, av);
    let mut rhs = vec![0.0; 2 + 2 * n];
    rhs[0] = qp.c.iter().sum();
    let settings = DefaultSettingsBuilder::default().verbose(false).time_limit(limit).max_iter(200).build().unwrap();
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &[ZeroConeT(2), NonnegativeConeT(2 * n)], settings).unwrap();
    let start = Instant::now();
    solver.solve();
    let secs = start.elapsed().as_secs_f64();
    let sol = &solver.solution;
    (secs, -(sol.obj_val + constant), format!("{:?}", sol.status))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut sizes = Vec::new();
    let mut limit = 600.0;
    let mut all = false;
    let mut smo_only = false;
    let (mut c_value, mut rho) = (SvmPlusParams::default().c, SvmPlusParams::default().rho);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--clarabel-limit" => limit = it.next().expect("SECONDS").parse().expect("SECONDS"),
            "--clarabel-all" => all = true,
            "--smo-only" => smo_only = true,
            "--c" => c_value = it.next().expect("C").parse().expect("C"),
            "--rho" => rho = it.next().expect("RHO").parse().expect("RHO"),
            s => sizes.push(s.parse::<usize>().expect("N")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![500, 2000, 5000];
    }
    println!(
        "{:>6} {:>10} {:>9} {:>20} {:>10} {:>20} {:>14}",
        "n", "gram s", "SMO s", "SMO dual", "Clarabel s", "Clarabel dual", "status"
    );
    for n in sizes {
        let data = LupiTask { n, ..LupiTask::default() }.generate(1);
        let d = &data.dataset;
        let params = SvmPlusParams { c: c_value, rho, ..SvmPlusParams::default() };
        let t0 = Instant::now();
        let m = params.matrices(&d.features, d.privileged.as_ref().unwrap()).unwrap();
        let gram = t0.elapsed().as_secs_f64();
        let y: Vec<f64> = d.labels.iter().map(|&l| if l == 1 { 1.0 } else { -1.0 }).collect();
        let c = vec![params.c; n];
        let qp = SvmPlusQp { a: m.a.view(), b: m.b.view(), y: &y, c: &c, upper: None, rho: params.rho };
        let t1 = Instant::now();
        let sol = qp.solve(&QpSettings { tol: 1e-6, ..QpSettings::default() }).unwrap();
        let smo = t1.elapsed().as_secs_f64();
        let (cs, cobj, status) = if !smo_only && (n <= 3000 || all) {
            clarabel(&qp, limit)
        } else {
            (f64::NAN, f64::NAN, "skipped".to_string())
        };
        println!(
            "{n:>6} {gram:>10.3} {smo:>9.3} {:>20.12} {cs:>10.2} {cobj:>20.12} {status:>14}  (SMO: {} steps, {} face steps, KKT violation {:.1e})",
            sol.dual_objective, sol.n_iter, sol.face_steps, sol.violation
        );
    }
}
