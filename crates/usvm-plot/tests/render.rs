//! Every figure renders to a PNG of the requested size that is not blank, and to an SVG with the expected
//! elements; invalid figures are typed errors.

use std::collections::HashSet;

use usvm_plot::{
    AnglePlot, AnglePoint, AngleSeries, BoundaryPlot, Format, Gaussian2, Line, PlotError, PrCurve, PrPlot,
};

/// Decodes a PNG: (width, height, distinct RGB colours).
fn decode(bytes: &[u8]) -> (u32, u32, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let colours: HashSet<&[u8]> = buf[..info.buffer_size()].chunks(3).collect();
    (info.width, info.height, colours.len())
}

/// The trimmed contents of an SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_string()))
        .collect()
}

fn boundary() -> BoundaryPlot {
    let g = |x: f64, y: f64, positive| Gaussian2 { mean: [x, y], cov: [[0.3, 0.1], [0.1, 0.2]], positive };
    BoundaryPlot {
        gaussians: vec![g(1.0, 1.0, true), g(2.0, 0.0, true), g(-1.0, -1.0, false), g(-2.0, 0.5, false)],
        lines: vec![
            Line { label: "LSVM".into(), w: [1.0, 1.0], b: 0.0 },
            Line { label: "LSVM-GSU".into(), w: [1.0, 0.3], b: 0.2 },
            Line { label: "LSVM-sampling".into(), w: [0.0, 1.0], b: 0.1 },
        ],
        title: Some("toy".into()),
        ..Default::default()
    }
}

fn pr() -> PrPlot {
    let y = vec![true, false, true, true, false, false, true, false];
    PrPlot {
        curves: vec![
            PrCurve { label: "gsu".into(), y: y.clone(), scores: vec![0.9, 0.1, 0.8, 0.7, 0.3, -0.2, 0.4, -1.0] },
            PrCurve { label: "hinge".into(), y, scores: vec![0.2, 0.9, 0.8, 0.1, 0.3, 0.3, 0.4, -1.0] },
        ],
        title: None,
    }
}

fn angle() -> AnglePlot {
    let points = [10.0, 100.0, 1000.0]
        .iter()
        .map(|&n: &f64| AnglePoint {
            n,
            angle: 20.0 / n.sqrt(),
            low: Some(10.0 / n.sqrt()),
            high: Some(30.0 / n.sqrt()),
        })
        .collect();
    AnglePlot {
        series: vec![AngleSeries { label: "2-D".into(), points }],
        references: vec![("thesis 2-D".into(), 1000.0, 1.7)],
        ..Default::default()
    }
}

#[test]
fn png_has_the_requested_size_and_is_not_blank() {
    for (name, bytes) in [
        ("boundary", boundary().render(Format::Png, 640, 480).unwrap()),
        ("pr", pr().render(Format::Png, 500, 400).unwrap()),
        ("angle", angle().render(Format::Png, 300, 700).unwrap()),
    ] {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        let (w, h, colours) = decode(&bytes);
        let expected = match name {
            "boundary" => (640, 480),
            "pr" => (500, 400),
            _ => (300, 700),
        };
        assert_eq!((w, h), expected, "{name}");
        // Background, axes, text (anti-aliased) and at least two series colours.
        assert!(colours >= 10, "{name}: only {colours} colours");
    }
}

#[test]
fn boundary_png_shows_the_class_and_line_colours() {
    let bytes = boundary().render(Format::Png, 400, 300).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes[..]));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    let has = |rgb: [u8; 3]| buf.chunks(3).any(|p| p == rgb);
    assert!(has([200, 30, 30]), "negative markers");
    assert!(has([20, 140, 40]), "positive markers");
    assert!(has([0, 114, 178]), "first line");
    assert!(has([213, 94, 0]), "second line");
}

#[test]
fn svg_has_the_expected_elements() {
    let svg = String::from_utf8(boundary().render(Format::Svg, 640, 480).unwrap()).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(r#"width="640""#) && svg.contains(r#"height="480""#));
    let t = texts(&svg);
    for label in ["LSVM", "LSVM-GSU", "LSVM-sampling", "positive", "negative", "toy"] {
        assert!(t.iter().any(|s| s == label), "missing text {label} in {t:?}");
    }
    // 4 ellipses + 3 lines + legend samples + axes: many polylines.
    assert!(svg.matches("<polyline").count() >= 10);

    let svg = String::from_utf8(pr().render(Format::Svg, 500, 400).unwrap()).unwrap();
    let t = texts(&svg);
    assert!(t.iter().any(|s| s == "Recall") && t.iter().any(|s| s == "Precision"), "{t:?}");
    assert!(t.iter().any(|s| s == "gsu (AP 1.000)") && t.iter().any(|s| s.starts_with("hinge (AP 0.5")), "{t:?}");

    let svg = String::from_utf8(angle().render(Format::Svg, 500, 400).unwrap()).unwrap();
    let t = texts(&svg);
    assert!(t.iter().any(|s| s == "2-D") && t.iter().any(|s| s == "thesis 2-D"), "{t:?}");
    assert!(svg.contains("<circle"), "points of the curve");
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(pr().render(Format::Png, 300, 200).unwrap(), pr().render(Format::Png, 300, 200).unwrap());
    assert_eq!(boundary().render(Format::Svg, 300, 200).unwrap(), boundary().render(Format::Svg, 300, 200).unwrap());
}

#[test]
fn invalid_figures_are_errors() {
    let invalid = |r: usvm_plot::Result<Vec<u8>>| matches!(r, Err(PlotError::Invalid { .. }));
    assert!(invalid(boundary().render(Format::Png, 10, 480)));
    assert!(invalid(boundary().render(Format::Png, 640, 20_000)));
    let mut b = boundary();
    b.gaussians[0].cov = [[1.0, 2.0], [2.0, 1.0]]; // indefinite
    assert!(invalid(b.render(Format::Svg, 400, 300)));
    let mut b = boundary();
    b.gaussians[1].mean[0] = f64::NAN;
    assert!(invalid(b.render(Format::Svg, 400, 300)));
    let mut b = boundary();
    b.lines[0].w = [0.0, 0.0];
    assert!(invalid(b.render(Format::Svg, 400, 300)));
    let b = BoundaryPlot { gaussians: vec![], ..boundary() };
    assert!(matches!(b.render(Format::Svg, 400, 300), Err(PlotError::Empty(_))));

    let mut p = pr();
    p.curves[0].scores.pop();
    assert!(invalid(p.render(Format::Svg, 400, 300)));
    let mut p = pr();
    p.curves[1].y = vec![false; 8];
    assert!(invalid(p.render(Format::Svg, 400, 300)));
    let mut p = pr();
    p.curves[0].scores[2] = f64::INFINITY;
    assert!(invalid(p.render(Format::Svg, 400, 300)));
    assert!(matches!(PrPlot::default().render(Format::Svg, 400, 300), Err(PlotError::Empty(_))));

    let mut a = angle();
    a.series[0].points[0].n = 0.0;
    assert!(invalid(a.render(Format::Svg, 400, 300)));
    assert!(matches!(AnglePlot::default().render(Format::Png, 400, 300), Err(PlotError::Empty(_))));
}

#[test]
fn gaussians_from_a_dataset() {
    use ndarray::array;
    use usvm::{Covariances, Dataset};
    let x = array![[0.0, 1.0], [1.0, 2.0], [3.0, 0.0]];
    let cov =
        ndarray::Array3::from_shape_vec((3, 2, 2), vec![1.0, 0.5, 0.5, 2.0, 1.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.0, 0.2])
            .unwrap();
    let data = Dataset::dense(x.clone(), vec![-1, 1, 1]).with_covariances(Covariances::full(cov));
    let g = BoundaryPlot::gaussians_from_dataset(&data).unwrap();
    assert_eq!(g[0], Gaussian2 { mean: [0.0, 1.0], cov: [[1.0, 0.5], [0.5, 2.0]], positive: false });
    assert!(g[1].positive && g[2].positive);
    let diag = Dataset::dense(x.clone(), vec![0, 0, 1]).with_covariances(Covariances::isotropic(vec![0.5, 1.0, 2.0]));
    assert_eq!(BoundaryPlot::gaussians_from_dataset(&diag).unwrap()[2].cov, [[2.0, 0.0], [0.0, 2.0]]);
    let three = Dataset::dense(array![[0.0, 1.0, 2.0]], vec![1]);
    assert!(matches!(BoundaryPlot::gaussians_from_dataset(&three), Err(PlotError::Invalid { .. })));
    let classes = Dataset::dense(x, vec![0, 1, 2]);
    assert!(matches!(BoundaryPlot::gaussians_from_dataset(&classes), Err(PlotError::Invalid { .. })));
}
