//! End-to-end tests of `usvm uncertainty ...`: the files written are read back by `usvm train`, bad input
//! is one line naming file, line and field, and nothing is written on error.

use crate::common;

use common::*;

const OBS: &str = "id,a,b,y\nu,1,2,1\nu,2,2,1\nu,3,5,1\nv,0,0,-1\nv,1,1,-1\nw,4,4,1\nw,4,5,1\nz,-1,0,-1\nz,0,-2,-1\n";

#[test]
fn repeated_writes_every_format_and_train_reads_it() {
    let d = temp_dir("repeated");
    let obs = d.join("obs.csv");
    std::fs::write(&obs, OBS).unwrap();
    let (m, l, c) = (d.join("m"), d.join("l"), d.join("c"));
    ok(&usvm(&[
        "uncertainty",
        "repeated",
        "--input",
        s(&obs),
        "--group-col",
        "id",
        "--cov-type",
        "lowrank",
        "--out-means",
        s(&m),
        "--out-labels",
        s(&l),
        "--out-cov",
        s(&c),
    ]));
    assert_eq!(std::fs::read_to_string(&l).unwrap(), "u 1\nv -1\nw 1\nz -1\n");
    assert_eq!(std::fs::read_to_string(&m).unwrap().lines().next().unwrap(), "u 1:2 2:3");
    // Σ_u = [[1, 1.5], [1.5, 3]] (unbiased), from the factor entries `uK,J:V` up to rounding.
    let line = std::fs::read_to_string(&c).unwrap().lines().next().unwrap().to_string();
    let mut u = [[0.0f64; 2]; 2];
    for token in line.split_whitespace().skip(1) {
        let (kj, v) = token.strip_prefix('u').expect("factor entries only").split_once(':').unwrap();
        let (k, j) = kj.split_once(',').unwrap();
        u[j.parse::<usize>().unwrap() - 1][k.parse::<usize>().unwrap() - 1] = v.parse().unwrap();
    }
    let sigma = |a: usize, b: usize| u[a][0] * u[b][0] + u[a][1] * u[b][1];
    assert!(line.starts_with("u u1,"), "{line}");
    for (got, want) in [(sigma(0, 0), 1.0), (sigma(0, 1), 1.5), (sigma(1, 1), 3.0)] {
        assert!((got - want).abs() < 1e-14, "{line}: {got} vs {want}");
    }
    let model = d.join("model.json");
    ok(&usvm(&["train", "--method", "gsu", "--means", s(&m), "--labels", s(&l), "--cov", s(&c), "--model", s(&model)]));
    for (flags, files) in
        [(["--out-data", "--out-var"], ["d.svm", "v.svm"]), (["--out-csv", "--out-var-csv"], ["d.csv", "v.csv"])]
    {
        let (a, b) = (d.join(files[0]), d.join(files[1]));
        ok(&usvm(&[
            "uncertainty",
            "repeated",
            "--input",
            s(&obs),
            "--group-col",
            "id",
            "--cov-type",
            "iso",
            flags[0],
            s(&a),
            flags[1],
            s(&b),
        ]));
        let input = if flags[0] == "--out-data" { ["--data", "--var"] } else { ["--csv", "--var-csv"] };
        ok(&usvm(&["train", "--method", "gsu", input[0], s(&a), input[1], s(&b), "--model", s(&model)]));
    }
}

#[test]
fn bad_input_names_file_line_and_field_and_writes_nothing() {
    let d = temp_dir("bad");
    let (a, b) = (d.join("out.csv"), d.join("out.var.csv"));
    let run = |name: &str, text: &str, extra: &[&str]| {
        let f = d.join(name);
        std::fs::write(&f, text).unwrap();
        let mut args = vec!["uncertainty", "repeated", "--input", s(&f), "--group-col", "id"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out-csv", s(&a), "--out-var-csv", s(&b)]);
        usvm(&args)
    };
    fails_with(
        &run("single.csv", "id,a,y\nu,1,1\nu,2,1\nv,0,-1\n", &[]),
        "single.csv:4: field 'v': group 'v' has a single observation",
    );
    fails_with(
        &run("ragged.csv", "id,a,b,y\nu,1,2,1\nu,2,1\n", &[]),
        "ragged.csv:3: field 'u,2,1': expected 4 fields, found 3",
    );
    fails_with(&run("nan.csv", "id,a,y\nu,1,1\nu,NaN,1\n", &[]), "nan.csv:3: field 'NaN': non-finite value");
    fails_with(&run("label.csv", "id,a,y\nu,1,1\nu,2,-1\n", &[]), "label.csv:3: field '-1': label differs");
    fails_with(&run("nocol.csv", "key,a,y\nu,1,1\n", &[]), "nocol.csv:1: field 'id': no such column");
    // A full covariance has no variance-CSV form: refused before anything is written.
    fails_with(&run("full.csv", OBS, &["--cov-type", "full"]), "no variance-file form");
    assert!(!a.exists() && !b.exists());
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "{left:?}");
}

#[test]
fn translation_welch_blocks_and_standard_errors() {
    let d = temp_dir("others");
    let img = d.join("img.csv");
    let header: Vec<String> = (0..16).map(|k| format!("p{k}")).collect();
    let rows: Vec<String> = (0..4)
        .map(|i| {
            format!("{},{}", (0..16).map(|k| ((k * 7 + i * 3) % 17).to_string()).collect::<Vec<_>>().join(","), i % 2)
        })
        .collect();
    std::fs::write(&img, format!("{},y\n{}\n", header.join(","), rows.join("\n"))).unwrap();
    let (m, l, c) = (d.join("m"), d.join("l"), d.join("c"));
    let out = ["--out-means", s(&m), "--out-labels", s(&l), "--out-cov", s(&c)];
    let mut args =
        vec!["uncertainty", "translation", "--images", s(&img), "--height", "4", "--width", "4", "--pixels", "1.5"];
    args.extend_from_slice(&out);
    ok(&usvm(&args));
    // Pixel (1,1) of image 0 = 10; its neighbours left/right are 7 and 13: σ = 0.5, U = 0.5·(13 - 7)/2.
    let cov = std::fs::read_to_string(&c).unwrap();
    assert!(cov.lines().next().unwrap().starts_with("1 u1,1:"), "{cov}");
    let model = d.join("model.json");
    ok(&usvm(&["train", "--method", "gsu", "--means", s(&m), "--labels", s(&l), "--cov", s(&c), "--model", s(&model)]));
    let mut bad =
        vec!["uncertainty", "translation", "--images", s(&img), "--height", "4", "--width", "3", "--pixels", "1"];
    bad.extend_from_slice(&out);
    fails_with(&usvm(&bad), "img.csv:1: field '': 16 pixel columns, but --height 4 × --width 3 = 12 pixels");

    let (a, b) = (d.join("a.csv"), d.join("b.csv"));
    ok(&usvm(&[
        "uncertainty",
        "blocks",
        "--input",
        s(&img),
        "--height",
        "4",
        "--width",
        "4",
        "--block-height",
        "2",
        "--block-width",
        "2",
        "--out-csv",
        s(&a),
        "--out-var-csv",
        s(&b),
    ]));
    assert_eq!(std::fs::read_to_string(&a).unwrap().lines().next().unwrap(), "b0_0_c0,b0_1_c0,b1_0_c0,b1_1_c0,label");
    fails_with(
        &usvm(&[
            "uncertainty",
            "blocks",
            "--input",
            s(&img),
            "--height",
            "4",
            "--width",
            "4",
            "--block-height",
            "3",
            "--block-width",
            "2",
            "--out-csv",
            s(&a),
            "--out-var-csv",
            s(&b),
        ]),
        "img.csv: data row 1: dimension mismatch in feature map height",
    );
    ok(&usvm(&[
        "uncertainty",
        "welch",
        "--input",
        s(&img),
        "--segment-len",
        "4",
        "--overlap",
        "2",
        "--fs",
        "4",
        "--out-csv",
        s(&a),
        "--out-var-csv",
        s(&b),
    ]));
    assert_eq!(std::fs::read_to_string(&a).unwrap().lines().next().unwrap(), "psd_0,psd_1,psd_2,label");
    ok(&usvm(&["train", "--method", "gsu", "--csv", s(&a), "--var-csv", s(&b), "--model", s(&model)]));

    let se = d.join("se.csv");
    std::fs::write(&se, "m1,s1,o,y\n1,0.5,3,1\n3,1,4,0\n2,0.25,5,1\n").unwrap();
    ok(&usvm(&[
        "uncertainty",
        "se-to-var",
        "--csv",
        s(&se),
        "--mean-cols",
        "m1",
        "--se-cols",
        "s1",
        "--out-csv",
        s(&a),
        "--out-var-csv",
        s(&b),
    ]));
    // Range 2, largest standard error 1: s = 0.8 · 2 · se; the default (paper) rule's variance is s.
    let first_column = |path: &std::path::Path| -> Vec<f64> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .skip(1)
            .map(|r| r.split(',').next().unwrap().parse().unwrap())
            .collect()
    };
    let var = first_column(&b);
    for (v, want) in var.iter().zip([0.8, 1.6, 0.4]) {
        assert!((v - want).abs() < 1e-12, "{var:?}");
    }
    // range-squared (and its old name range): s²; squared: se².
    for (rule, want) in
        [("range-squared", [0.64, 2.56, 0.16]), ("range", [0.64, 2.56, 0.16]), ("squared", [0.25, 1.0, 0.0625])]
    {
        let args =
            ["uncertainty", "se-to-var", "--csv", s(&se), "--mean-cols", "m1", "--se-cols", "s1", "--rule", rule];
        ok(&usvm(&[&args[..], &["--out-csv", s(&a), "--out-var-csv", s(&b)]].concat()));
        let var = first_column(&b);
        for (v, want) in var.iter().zip(want) {
            assert!((v - want).abs() < 1e-12, "{rule}: {var:?}");
        }
    }
    std::fs::write(&se, "m1,s1,y\n1,-0.5,1\n3,1,0\n").unwrap();
    fails_with(
        &usvm(&[
            "uncertainty",
            "se-to-var",
            "--csv",
            s(&se),
            "--mean-cols",
            "m1",
            "--se-cols",
            "s1",
            "--out-csv",
            s(&a),
            "--out-var-csv",
            s(&b),
        ]),
        "field 's1': negative standard error -0.5 in data row 1",
    );
}

#[test]
fn help_explains_each_subcommand() {
    let out = usvm(&["uncertainty", "--help"]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["repeated", "translation", "se-to-var", "welch", "blocks"] {
        assert!(text.contains(sub), "{text}");
    }
    let out = usvm(&["uncertainty", "translation", "--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("J Σ_t Jᵀ"));
}

#[test]
fn image_sizes_whose_product_wraps_are_refused() {
    // (2^63 + 1)² is 1 modulo 2^64: one value column must not pass for a 2^63 + 1 square image.
    let d = temp_dir("wraps");
    let one = d.join("one.csv");
    std::fs::write(&one, "p,y\n1,1\n2,-1\n").unwrap();
    let (a, b) = (d.join("a.csv"), d.join("b.csv"));
    let side = "9223372036854775809";
    let out = ["--out-csv", s(&a), "--out-var-csv", s(&b)];
    let mut blocks = vec!["uncertainty", "blocks", "--input", s(&one), "--height", side, "--width", side];
    blocks.extend_from_slice(&["--block-height", "1", "--block-width", "1"]);
    blocks.extend_from_slice(&out);
    fails_with(
        &usvm(&blocks),
        "1 value columns, but --height × --width × --channels = 85070591730234615884290395931651604481",
    );
    let mut translation = vec!["uncertainty", "translation", "--images", s(&one), "--height", side, "--width", side];
    translation.extend_from_slice(&["--pixels", "1"]);
    translation.extend_from_slice(&out);
    fails_with(&usvm(&translation), "1 pixel columns, but --height 9223372036854775809 × --width 9223372036854775809");
}

#[test]
fn a_segment_longer_than_the_series_is_an_error_not_an_allocation() {
    let d = temp_dir("welch");
    let series = d.join("series.csv");
    std::fs::write(&series, "a,b,c,d,y\n1,2,3,4,1\n4,3,2,1,-1\n").unwrap();
    let (a, b) = (d.join("a.csv"), d.join("b.csv"));
    let mut args = vec!["uncertainty", "welch", "--input", s(&series), "--segment-len", "1000000000000000"];
    args.extend_from_slice(&["--out-csv", s(&a), "--out-var-csv", s(&b)]);
    fails_with(&usvm(&args), "series.csv: data row 1:");
}
