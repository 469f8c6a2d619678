//! End-to-end tests of `usvm plot boundary|pr|angle`: the figures are written at the requested size and
//! are not blank; bad inputs fail with one line naming file, line and field, and leave no output file.

use crate::common;

use common::*;

use std::path::Path;

/// (width, height, distinct colours) of a PNG file.
fn png_info(path: &Path) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let colours: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()].chunks(step).collect();
    (info.width, info.height, colours.len())
}

/// A 2-feature CSV training set with per-feature variances.
fn toy_2d(dir: &Path) -> (String, String) {
    let rows = [
        (1.0, 1.2, 0.3, 0.05, 1),
        (2.0, 0.4, 0.05, 0.4, 1),
        (1.5, 2.1, 0.2, 0.2, 1),
        (0.3, 1.4, 0.5, 0.1, 1),
        (-1.0, -0.8, 0.1, 0.3, -1),
        (-2.0, 0.3, 0.2, 0.2, -1),
        (-0.6, -1.9, 0.4, 0.1, -1),
        (0.2, -0.9, 0.3, 0.6, -1),
    ];
    let (mut x, mut v) = (String::from("a,b,label\n"), String::from("a,b\n"));
    for (a, b, va, vb, y) in rows {
        x += &format!("{a},{b},{y}\n");
        v += &format!("{va},{vb}\n");
    }
    let (xp, vp) = (dir.join("toy.csv"), dir.join("toy.var.csv"));
    std::fs::write(&xp, x).unwrap();
    std::fs::write(&vp, v).unwrap();
    (p(&xp), p(&vp))
}

#[test]
fn boundary_png_and_svg() {
    let dir = temp_dir("boundary");
    let (x, v) = toy_2d(&dir);
    for method in ["hinge", "gsu"] {
        let model = p(&dir.join(format!("{method}.json")));
        ok(&usvm(&["train", "--method", method, "--lambda", "0.1", "--csv", &x, "--var-csv", &v, "--model", &model]));
    }
    let (hinge, gsu) = (p(&dir.join("hinge.json")), p(&dir.join("gsu.json")));
    let png = dir.join("b.png");
    let common = ["plot", "boundary", "--csv", &x, "--var-csv", &v, "--model", &hinge, "--model", &gsu];
    let out =
        usvm(&[&common[..], &["--label", "LSVM", "--output", &p(&png), "--width", "640", "--height", "480"]].concat());
    ok(&out);
    let (w, h, colours) = png_info(&png);
    assert_eq!((w, h), (640, 480));
    assert!(colours >= 10, "{colours} colours");

    let svg = dir.join("b.SVG");
    ok(&usvm(&[&common[..], &["--label", "LSVM", "--output", &p(&svg), "--title", "toy"]].concat()));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains(r#"width="800""#) && text.contains(r#"height="600""#));
    // The second model is named after its file; 8 ellipses, 2 lines, legend samples.
    for label in ["LSVM", "gsu", "toy", "positive", "negative"] {
        assert!(text.contains(&format!("\n{label}\n</text>")), "missing {label}");
    }
    assert!(text.matches("<polyline").count() >= 12);
    // No temporary files are left beside the outputs.
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn boundary_errors_write_nothing() {
    let dir = temp_dir("boundary-errors");
    let (x, v) = toy_2d(&dir);
    let out = dir.join("b.png");
    // 3 features.
    let o = usvm(&["plot", "boundary", "--csv", &data("train.csv"), "--output", &p(&out)]);
    fails_with(&o, "needs exactly 2 features");
    // A 3-feature model over 2-feature data.
    let m3 = p(&dir.join("m3.json"));
    ok(&usvm(&["train", "--method", "hinge", "--csv", &data("train.csv"), "--model", &m3]));
    let o = usvm(&["plot", "boundary", "--csv", &x, "--var-csv", &v, "--model", &m3, "--output", &p(&out)]);
    fails_with(&o, "m3.json: a boundary plot needs a binary linear model with 2 features");
    // Unknown extension: refused before anything is read.
    let pdf = dir.join("b.pdf");
    let o = usvm(&["plot", "boundary", "--csv", &x, "--output", &p(&pdf)]);
    fails_with(&o, "b.pdf: unknown plot format (use a .png or .svg file name)");
    // Size out of range.
    let o = usvm(&["plot", "boundary", "--csv", &x, "--output", &p(&out), "--width", "10"]);
    fails_with(&o, "invalid width = 10");
    assert!(!out.exists() && !pdf.exists());
}

/// A model trained on train.csv, and its scores on test.csv.
/// A score file of LSVM-GSU on the CSV fixtures, in `dir`.
fn gsu_scores(dir: &Path) -> String {
    let model = p(&dir.join("m.json"));
    ok(&usvm(&[
        "train",
        "--method",
        "gsu",
        "--csv",
        &data("train.csv"),
        "--var-csv",
        &data("train.var.csv"),
        "--model",
        &model,
    ]));
    let s = p(&dir.join("gsu.scores"));
    ok(&usvm(&["predict", "--model", &model, "--csv", &data("test.csv"), "--output", &s]));
    s
}

#[test]
fn pr_curves_from_score_files() {
    let dir = temp_dir("pr");
    let s = gsu_scores(&dir);
    // A second scorer: the negated scores (same header).
    let text = std::fs::read_to_string(&s).unwrap();
    let mut flipped = String::new();
    for (k, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if k == 0 {
            flipped += &format!("{line}\n");
        } else {
            let v: f64 = f[1].parse().unwrap();
            flipped += &format!("{} {}\n", f[0], -v);
        }
    }
    let s2 = p(&dir.join("flipped.scores"));
    std::fs::write(&s2, flipped).unwrap();
    let png = dir.join("pr.png");
    let o = usvm(&[
        "plot",
        "pr",
        "--csv",
        &data("test.csv"),
        "--scores",
        &s,
        "--scores",
        &s2,
        "--output",
        &p(&png),
        "--width",
        "500",
        "--height",
        "420",
    ]);
    ok(&o);
    let (w, h, colours) = png_info(&png);
    assert_eq!((w, h), (500, 420));
    assert!(colours >= 10);
    let svg = dir.join("pr.svg");
    ok(&usvm(&["plot", "pr", "--csv", &data("test.csv"), "--scores", &s, "--label", "LSVM-GSU", "--output", &p(&svg)]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("\nLSVM-GSU (AP ") && text.contains("\nRecall\n"));
}

#[test]
fn bad_score_files_fail_with_file_line_field() {
    let dir = temp_dir("pr-errors");
    let good = std::fs::read_to_string(gsu_scores(&dir)).unwrap();
    let out = dir.join("pr.png");
    let case = |name: &str, text: &str, needle: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = usvm(&["plot", "pr", "--csv", &data("test.csv"), "--scores", &p(&path), "--output", &p(&out)]);
        fails_with(&o, &needle.replace("FILE", &p(&path)));
        assert!(!out.exists(), "{name} left an output file");
    };
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    lines[3] = "1 abc".into();
    case("nan.scores", &(lines.join("\n") + "\n"), "FILE:4: field 'abc': column `score`: not a number");
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    lines[2] = "1 0.5 7".into();
    case("fields.scores", &(lines.join("\n") + "\n"), "FILE:3: field '7': expected 2 fields as in the header, found 3");
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    lines[5] = "-1 inf".into();
    case("inf.scores", &(lines.join("\n") + "\n"), "FILE:6: field 'inf': column `score`: non-finite value");
    case("header.scores", "label value\n1 0.5\n", "FILE:1: field 'label': not a `usvm predict` header");
    case("empty.scores", "", "FILE:0: field '': empty file");
    let short: Vec<&str> = good.lines().take(4).collect();
    case("short.scores", &(short.join("\n") + "\n"), "FILE: 3 score rows, but");
    // Missing file, and an unknown output format.
    let o = usvm(&["plot", "pr", "--csv", &data("test.csv"), "--scores", &p(&dir.join("none")), "--output", &p(&out)]);
    fails_with(&o, "none: No such file or directory");
    let o = usvm(&["plot", "pr", "--csv", &data("test.csv"), "--scores", "x", "--output", &p(&dir.join("pr.jpg"))]);
    fails_with(&o, "pr.jpg: unknown plot format");
    assert!(!out.exists() && !dir.join("pr.jpg").exists());
}

#[test]
fn angle_plot_from_csv() {
    let dir = temp_dir("angle");
    let csv = dir.join("angles.csv");
    let mut text = String::from("dim,samples,angle_mean,angle_min,angle_max,repeats\n");
    for (d, scale) in [(2, 20.0), (3, 40.0)] {
        for n in [10.0f64, 100.0, 1000.0, 10000.0] {
            let a = scale / n.sqrt();
            text += &format!("{d},{n},{a},{},{},5\n", 0.5 * a, 1.5 * a);
        }
    }
    std::fs::write(&csv, text).unwrap();
    let png = dir.join("angle.png");
    ok(&usvm(&[
        "plot",
        "angle",
        "--angles",
        &p(&csv),
        "--paper",
        "--output",
        &p(&png),
        "--width",
        "900",
        "--height",
        "500",
    ]));
    let (w, h, colours) = png_info(&png);
    assert_eq!((w, h), (900, 500));
    assert!(colours >= 10);
    let svg = dir.join("angle.svg");
    ok(&usvm(&["plot", "angle", "--angles", &p(&csv), "--paper", "--output", &p(&svg)]));
    let t = std::fs::read_to_string(&svg).unwrap();
    assert!(t.contains("\n2-D\n") && t.contains("\n3-D\n") && t.contains("\nthesis 3-D: 1.7°\n"));

    std::fs::write(&csv, "dim,samples,angle_mean\n2,10,3.5\n2,0,1.0\n").unwrap();
    let o = usvm(&["plot", "angle", "--angles", &p(&csv), "--output", &p(&dir.join("bad.png"))]);
    fails_with(&o, &format!("{}:3: field '0': column `samples`: must be positive", p(&csv)));
    std::fs::write(&csv, "dim,n,angle_mean\n2,10,3.5\n").unwrap();
    let o = usvm(&["plot", "angle", "--angles", &p(&csv), "--output", &p(&dir.join("bad.png"))]);
    fails_with(&o, &format!("{}:1: field 'samples': missing column", p(&csv)));
    assert!(!dir.join("bad.png").exists());
}
