//! Bi & Zhang's synthetic study (paper 003, Table 1): SVC vs TSVC test error beside the paper's numbers.
//!
//! `cargo run --release -p usvm-experiments --example tsvc_synthetic -- [--c C] [--trials N] [--noise std|var] [--seed S] [--rounds R] [--delta-scale S]`

use std::time::Instant;

use usvm_experiments::tsvc_synthetic::{NoiseScale, Target, TsvcSynthetic, run};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut protocol = TsvcSynthetic::default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).ok_or_else(|| format!("{} needs a value", pair[0]))?;
        match pair[0].as_str() {
            "--c" => protocol.c = value.parse()?,
            "--trials" => protocol.trials = value.parse()?,
            "--seed" => protocol.seed = value.parse()?,
            "--rounds" => protocol.max_rounds = value.parse()?,
            "--delta-scale" => protocol.delta_scale = value.parse()?,
            "--noise" => {
                protocol.noise = match value.as_str() {
                    "std" => NoiseScale::StandardDeviation,
                    "var" => NoiseScale::Variance,
                    other => return Err(format!("--noise std|var, not {other}").into()),
                }
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    println!(
        "TSVC synthetic (Bi & Zhang Table 1): {} trials, test size {}, C = {}, noise σ_i as {:?}, δ_i = {} × noise scale, seed {}",
        protocol.trials, protocol.test_size, protocol.c, protocol.noise, protocol.delta_scale, protocol.seed
    );
    for target in [Target::Linear, Target::Quadratic] {
        let start = Instant::now();
        let columns = run(&protocol, target)?;
        println!("\n{target:?} target ({}), average test error %:", target.kernel().name());
        let radii = columns.iter().any(|c| c.svc_radius.is_some());
        println!(
            "{:>5} {:>14} {:>14} {:>10} {:>10} {:>10} {:>7}{}",
            "ℓ",
            "SVC (± se)",
            "TSVC (± se)",
            "paper SVC",
            "paper TSVC",
            "wins/loss",
            "rounds",
            if radii { "  radius SVC / TSVC (target 3)  error % at radius 3 SVC / TSVC" } else { "" }
        );
        let mut all_better = true;
        for (col, (p_svc, p_tsvc)) in columns.iter().zip(target.paper()) {
            all_better &= col.tsvc < col.svc;
            let radius = match (col.svc_radius, col.tsvc_radius) {
                (Some(s), Some(t)) => format!("  {s:>10.3} / {t:.3}"),
                _ => String::new(),
            } + &col
                .at_target_radius
                .map_or(String::new(), |(s, t)| format!("  {:>22.2} / {:.2}", 100.0 * s, 100.0 * t));
            println!(
                "{:>5} {:>7.2} ±{:>5.2} {:>7.2} ±{:>5.2} {:>10.1} {:>10.1} {:>5}/{:<4} {:>7.2}{radius}",
                col.size,
                100.0 * col.svc,
                100.0 * col.svc_se,
                100.0 * col.tsvc,
                100.0 * col.tsvc_se,
                p_svc,
                p_tsvc,
                col.tsvc_wins,
                col.tsvc_losses,
                col.rounds
            );
        }
        println!(
            "TSVC better than SVC on average in every column: {all_better} ({:.1} s)",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
