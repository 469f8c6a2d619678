//! 2-D decision boundaries over Gaussian training examples (thesis Fig. 3.3).
//!
//! Each example `N(μ, Σ)` is drawn as its mean (negatives ×, positives +) and the ellipse
//! `{μ + k L u : ‖u‖ = 1}` with `Σ = L Lᵀ`, the set where the Mahalanobis distance to `μ` is `k`
//! (`L = V Λ^{1/2}` from the closed-form eigen-decomposition of the 2×2 matrix). Each classifier is the
//! line `w₁x + w₂y + b = 0`, clipped to the view. Both axes use the same scale, so ellipses keep their shape.

use plotters::coord::Shift;
use plotters::prelude::*;
use usvm::Dataset;

use crate::{DrawResult, FAMILY, Figure, Format, PlotError, Result, draw_error, font_px, invalid, padded, palette};

/// One training example: a 2-D Gaussian and its class.
#[derive(Debug, Clone, PartialEq)]
pub struct Gaussian2 {
    pub mean: [f64; 2],
    /// Symmetric positive semi-definite.
    pub cov: [[f64; 2]; 2],
    pub positive: bool,
}

/// A linear decision boundary `w₁x + w₂y + b = 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub label: String,
    pub w: [f64; 2],
    pub b: f64,
}

/// The figure: examples, their `sigmas`-σ ellipses, and the lines (in legend order; styles cycle
/// solid, dashed, dotted).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryPlot {
    pub gaussians: Vec<Gaussian2>,
    pub lines: Vec<Line>,
    /// Mahalanobis radius of the ellipses (`k`); 0 draws no ellipses.
    pub sigmas: f64,
    pub title: Option<String>,
    pub x_label: String,
    pub y_label: String,
}

impl Default for BoundaryPlot {
    fn default() -> Self {
        BoundaryPlot {
            gaussians: Vec::new(),
            lines: Vec::new(),
            sigmas: 2.0,
            title: None,
            x_label: "x₁".into(),
            y_label: "x₂".into(),
        }
    }
}

const NEGATIVE: RGBColor = RGBColor(200, 30, 30);
const POSITIVE: RGBColor = RGBColor(20, 140, 40);

/// Points on the ellipse `μ + k L u`, `u` on the unit circle.
pub(crate) fn ellipse(g: &Gaussian2, k: f64, n: usize) -> Vec<(f64, f64)> {
    let [[a, b], [_, c]] = g.cov;
    let mid = 0.5 * (a + c);
    let rad = (0.25 * (a - c) * (a - c) + b * b).sqrt();
    let (l1, l2) = ((mid + rad).max(0.0).sqrt(), (mid - rad).max(0.0).sqrt());
    let theta = 0.5 * (2.0 * b).atan2(a - c);
    let (s, co) = theta.sin_cos();
    (0..=n)
        .map(|t| {
            let (st, ct) = (std::f64::consts::TAU * t as f64 / n as f64).sin_cos();
            let (u, v) = (k * l1 * ct, k * l2 * st);
            (g.mean[0] + co * u - s * v, g.mean[1] + s * u + co * v)
        })
        .collect()
}

/// The segment of `w₁x + w₂y + b = 0` inside the box, if it crosses it.
fn clip(line: &Line, (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> Option<[(f64, f64); 2]> {
    let [w1, w2] = line.w;
    let mut hits: Vec<(f64, f64)> = Vec::with_capacity(4);
    if w2 != 0.0 {
        for x in [x0, x1] {
            let y = -(w1 * x + line.b) / w2;
            if (y0..=y1).contains(&y) {
                hits.push((x, y));
            }
        }
    }
    if w1 != 0.0 {
        for y in [y0, y1] {
            let x = -(w2 * y + line.b) / w1;
            if (x0..=x1).contains(&x) {
                hits.push((x, y));
            }
        }
    }
    let d = |p: (f64, f64), q: (f64, f64)| (p.0 - q.0).powi(2) + (p.1 - q.1).powi(2);
    let mut best: Option<([(f64, f64); 2], f64)> = None;
    for (i, &p) in hits.iter().enumerate() {
        for &q in &hits[i + 1..] {
            if best.is_none_or(|(_, e)| d(p, q) > e) {
                best = Some(([p, q], d(p, q)));
            }
        }
    }
    best.filter(|(_, e)| *e > 0.0).map(|(s, _)| s)
}

impl BoundaryPlot {
    /// The examples of a 2-feature dataset with their covariances (`Covariances::None` gives zero
    /// ellipses); the positive class is the larger label, as in usvm's binary models.
    pub fn gaussians_from_dataset(data: &Dataset) -> Result<Vec<Gaussian2>> {
        if data.n_features() != 2 {
            return Err(invalid("n_features", data.n_features(), "a boundary plot needs exactly 2 features"));
        }
        let classes = data.classes();
        if classes.len() > 2 {
            return Err(invalid("classes", classes.len(), "a boundary plot needs at most 2 classes"));
        }
        let positive = classes.last().copied();
        let cov = data.covariances.as_dyn();
        let e = [[1.0, 0.0], [0.0, 1.0]];
        Ok((0..data.n_samples())
            .map(|i| {
                let m = data.features.row_dense(i);
                let s = |a: usize, b: usize| cov.bilinear(i, &e[a], &e[b]);
                Gaussian2 {
                    mean: [m[0], m[1]],
                    cov: [[s(0, 0), s(0, 1)], [s(1, 0), s(1, 1)]],
                    positive: Some(data.labels[i]) == positive && classes.len() == 2,
                }
            })
            .collect())
    }

    fn validate(&self) -> Result<()> {
        if self.gaussians.is_empty() {
            return Err(PlotError::Empty("no examples"));
        }
        if !(self.sigmas >= 0.0 && self.sigmas.is_finite()) {
            return Err(invalid("sigmas", self.sigmas, "must be finite and non-negative"));
        }
        for (i, g) in self.gaussians.iter().enumerate() {
            if !g.mean.iter().chain(g.cov.iter().flatten()).all(|v| v.is_finite()) {
                return Err(invalid("gaussian", i, "has a non-finite mean or covariance"));
            }
            let [[a, b], [b2, c]] = g.cov;
            let tol = 1e-9 * (a.abs() + c.abs()).max(f64::MIN_POSITIVE);
            if (b - b2).abs() > tol || a < -tol || c < -tol || a * c - b * b2 < -tol * (a.abs() + c.abs()) {
                return Err(invalid("gaussian", i, "has a covariance that is not symmetric positive semi-definite"));
            }
        }
        for l in &self.lines {
            if !(l.w.iter().all(|v| v.is_finite()) && l.b.is_finite()) || l.w == [0.0, 0.0] {
                return Err(invalid("line", &l.label, "needs finite coefficients and a nonzero normal w"));
            }
        }
        Ok(())
    }

    /// Renders the figure to PNG or SVG bytes.
    pub fn render(&self, format: Format, width: u32, height: u32) -> Result<Vec<u8>> {
        self.validate()?;
        crate::render_figure(self, format, width, height)
    }
}

impl Figure for BoundaryPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        let (width, height) = root.dim_in_pixel();
        let px = font_px(width, height, 1.0);
        let ellipses: Vec<Vec<(f64, f64)>> = self
            .gaussians
            .iter()
            .map(|g| if self.sigmas > 0.0 { ellipse(g, self.sigmas, 96) } else { vec![] })
            .collect();
        let all = self.gaussians.iter().map(|g| (g.mean[0], g.mean[1])).chain(ellipses.iter().flatten().copied());
        let (mut xlo, mut xhi, mut ylo, mut yhi) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for (x, y) in all {
            (xlo, xhi, ylo, yhi) = (xlo.min(x), xhi.max(x), ylo.min(y), yhi.max(y));
        }
        let (mut xr, mut yr) = (padded(xlo, xhi, 0.06), padded(ylo, yhi, 0.06));

        // Equal scales: widen the range whose units are smaller on screen.
        let margin = (px * 0.8) as u32;
        let label_area = (px * 2.6) as u32;
        let caption = if self.title.is_some() { (px * 1.8) as u32 } else { 0 };
        let plot_w = f64::from(width.saturating_sub(2 * margin + label_area).max(1));
        let plot_h = f64::from(height.saturating_sub(2 * margin + label_area + caption).max(1));
        let (sx, sy) = ((xr.1 - xr.0) / plot_w, (yr.1 - yr.0) / plot_h);
        if sx > sy {
            let extra = 0.5 * (sx * plot_h - (yr.1 - yr.0));
            yr = (yr.0 - extra, yr.1 + extra);
        } else {
            let extra = 0.5 * (sy * plot_w - (xr.1 - xr.0));
            xr = (xr.0 - extra, xr.1 + extra);
        }

        let mut builder = ChartBuilder::on(root);
        builder.margin(margin).x_label_area_size(label_area).y_label_area_size(label_area);
        if let Some(title) = &self.title {
            builder.caption(title, (FAMILY, px * 1.2));
        }
        let mut chart = builder.build_cartesian_2d(xr.0..xr.1, yr.0..yr.1).map_err(draw_error)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(246, 246, 246))
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .label_style((FAMILY, px * 0.8))
            .axis_desc_style((FAMILY, px * 0.9))
            .draw()
            .map_err(draw_error)?;

        let stroke = (px / 10.0).max(1.0) as u32;
        for (g, e) in self.gaussians.iter().zip(&ellipses) {
            let color = if g.positive { POSITIVE } else { NEGATIVE };
            if !e.is_empty() {
                chart
                    .draw_series(LineSeries::new(e.iter().copied(), color.mix(0.55).stroke_width(1)))
                    .map_err(draw_error)?;
            }
        }
        let marker = (px * 0.35) as i32;
        let leg = crate::legend_len(px);
        for positive in [false, true] {
            let color = if positive { POSITIVE } else { NEGATIVE };
            let style = color.stroke_width(stroke + 1);
            let points = self.gaussians.iter().filter(|g| g.positive == positive).map(|g| (g.mean[0], g.mean[1]));
            let m = marker;
            let (a, b) = if positive {
                (vec![(-m, 0), (m, 0)], vec![(0, -m), (0, m)])
            } else {
                (vec![(-m, -m), (m, m)], vec![(-m, m), (m, -m)])
            };
            let (a2, b2) = (a.clone(), b.clone());
            let shape = move |c: (f64, f64)| {
                EmptyElement::at(c) + PathElement::new(a.clone(), style) + PathElement::new(b.clone(), style)
            };
            let name = if positive { "positive" } else { "negative" };
            if self.gaussians.iter().any(|g| g.positive == positive) {
                chart.draw_series(points.map(shape)).map_err(draw_error)?.label(name).legend(move |(x, y)| {
                    EmptyElement::at((x + leg / 2, y))
                        + PathElement::new(a2.clone(), style)
                        + PathElement::new(b2.clone(), style)
                });
            }
        }

        let dash = ((px * 0.6) as i32).max(4);
        for (k, line) in self.lines.iter().enumerate() {
            let style = palette(k).stroke_width(stroke + 1);
            let segment: Vec<(f64, f64)> = clip(line, xr, yr).map(|s| s.to_vec()).unwrap_or_default();
            let label = line.label.as_str();
            let piece = move |a: i32, b: i32| PathElement::new(vec![(a, 0), (b, 0)], style);
            let (d, g) = (dash, dash * 2 / 3);
            match k % 3 {
                0 => {
                    chart
                        .draw_series(LineSeries::new(segment, style))
                        .map_err(draw_error)?
                        .label(label)
                        .legend(move |(x, y)| EmptyElement::at((x, y)) + piece(0, leg));
                }
                1 => {
                    chart
                        .draw_series(DashedLineSeries::new(segment, d, g, style))
                        .map_err(draw_error)?
                        .label(label)
                        .legend(move |(x, y)| {
                            EmptyElement::at((x, y))
                                + piece(0, leg / 4)
                                + piece(3 * leg / 8, 5 * leg / 8)
                                + piece(3 * leg / 4, leg)
                        });
                }
                _ => {
                    let dot = stroke as i32 + 1;
                    let gap = (d / 2).max(2 * dot);
                    chart
                        .draw_series(DashedLineSeries::new(segment, dot, gap, style))
                        .map_err(draw_error)?
                        .label(label)
                        .legend(move |(x, y)| {
                            let at = |j: i32| piece(j * leg / 4, j * leg / 4 + dot);
                            EmptyElement::at((x, y)) + at(0) + at(1) + at(2) + at(3) + at(4)
                        });
                }
            }
        }

        chart
            .configure_series_labels()
            .position(emptiest_corner(&self.gaussians, &ellipses, xr, yr))
            .legend_area_size(crate::legend_len(px) + (px * 0.5) as i32)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font((FAMILY, px * 0.8))
            .draw()
            .map_err(draw_error)?;
        Ok(())
    }
}

/// The corner of the view whose 40% × 40% box holds the fewest means and ellipse points (for the legend;
/// ties prefer upper right, upper left, lower right, lower left, in that order).
fn emptiest_corner(
    gaussians: &[Gaussian2],
    ellipses: &[Vec<(f64, f64)>],
    xr: (f64, f64),
    yr: (f64, f64),
) -> SeriesLabelPosition {
    let (wx, wy) = (0.4 * (xr.1 - xr.0), 0.4 * (yr.1 - yr.0));
    let origins = [(xr.1 - wx, yr.1 - wy), (xr.0, yr.1 - wy), (xr.1 - wx, yr.0), (xr.0, yr.0)];
    // A mean weighs as much as a whole ellipse outline (96 points sampled every 8th).
    let weighted = gaussians
        .iter()
        .map(|g| ((g.mean[0], g.mean[1]), 12))
        .chain(ellipses.iter().flat_map(|e| e.iter().step_by(8).map(|&p| (p, 1))));
    let mut counts = [0usize; 4];
    for ((x, y), w) in weighted {
        for (k, &(x0, y0)) in origins.iter().enumerate() {
            if (x0..=x0 + wx).contains(&x) && (y0..=y0 + wy).contains(&y) {
                counts[k] += w;
            }
        }
    }
    let best = (0..4).fold(0, |b, k| if counts[k] < counts[b] { k } else { b });
    match best {
        0 => SeriesLabelPosition::UpperRight,
        1 => SeriesLabelPosition::UpperLeft,
        2 => SeriesLabelPosition::LowerRight,
        _ => SeriesLabelPosition::LowerLeft,
    }
}
