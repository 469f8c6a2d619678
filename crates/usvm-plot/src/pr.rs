//! Precision-recall curves.
//!
//! Examples are taken in decreasing score order, tied scores together (one threshold per distinct score);
//! after threshold `k` the curve has recall `R_k = TP_k / P` and precision `P_k = TP_k / (TP_k + FP_k)`.
//! It is drawn as the step function that is `P_k` on `(R_{k-1}, R_k]`, whose area is the average
//! precision `Σ_k (R_k − R_{k−1}) P_k` ([`usvm::metrics::average_precision`], shown in the legend).

use plotters::coord::Shift;
use plotters::prelude::*;
use usvm::metrics::average_precision;

use crate::{DrawResult, FAMILY, Figure, Format, PlotError, Result, draw_error, font_px, invalid, palette};

/// One scorer's scores and the true classes (`true` = positive).
#[derive(Debug, Clone, PartialEq)]
pub struct PrCurve {
    pub label: String,
    pub y: Vec<bool>,
    pub scores: Vec<f64>,
}

/// The figure: one curve per scorer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrPlot {
    pub curves: Vec<PrCurve>,
    pub title: Option<String>,
}

/// The `(recall, precision)` points after each distinct threshold, in decreasing-score order.
/// `y` and `scores` must have the same length and `y` at least one positive.
pub fn pr_points(y: &[bool], scores: &[f64]) -> Vec<(f64, f64)> {
    let positives = y.iter().filter(|&&p| p).count() as f64;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut out = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let s = scores[order[k]];
        while k < order.len() && scores[order[k]] == s {
            if y[order[k]] {
                tp += 1;
            } else {
                fp += 1;
            }
            k += 1;
        }
        out.push((tp as f64 / positives, tp as f64 / (tp + fp) as f64));
    }
    out
}

impl PrCurve {
    fn validate(&self) -> Result<()> {
        if self.y.len() != self.scores.len() {
            return Err(invalid("scores", self.scores.len(), "must have one score per label"));
        }
        if self.y.is_empty() {
            return Err(PlotError::Empty("a precision-recall curve without examples"));
        }
        if let Some(s) = self.scores.iter().find(|s| !s.is_finite()) {
            return Err(invalid("score", s, "must be finite"));
        }
        if !self.y.contains(&true) {
            return Err(invalid("labels", &self.label, "have no positive example: recall is undefined"));
        }
        Ok(())
    }

    /// The step function's vertices, starting at recall 0; thresholds that do not raise the recall add no
    /// area and are skipped, and no vertex repeats (plotters' thick-line rasteriser needs distinct vertices).
    fn steps(&self) -> Vec<(f64, f64)> {
        let mut out: Vec<(f64, f64)> = Vec::new();
        let mut recall = 0.0;
        for (r, p) in pr_points(&self.y, &self.scores) {
            if r > recall {
                for v in [(recall, p), (r, p)] {
                    if out.last() != Some(&v) {
                        out.push(v);
                    }
                }
                recall = r;
            }
        }
        out
    }
}

impl PrPlot {
    /// Renders the figure to PNG or SVG bytes.
    pub fn render(&self, format: Format, width: u32, height: u32) -> Result<Vec<u8>> {
        if self.curves.is_empty() {
            return Err(PlotError::Empty("no precision-recall curves"));
        }
        self.curves.iter().try_for_each(PrCurve::validate)?;
        crate::render_figure(self, format, width, height)
    }
}

impl Figure for PrPlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        let (width, height) = root.dim_in_pixel();
        let px = font_px(width, height, 1.0);
        let mut builder = ChartBuilder::on(root);
        builder.margin((px * 0.8) as u32).x_label_area_size((px * 2.6) as u32).y_label_area_size((px * 3.2) as u32);
        if let Some(title) = &self.title {
            builder.caption(title, (FAMILY, px * 1.2));
        }
        let mut chart = builder.build_cartesian_2d(0.0..1.0, 0.0..1.02).map_err(draw_error)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(246, 246, 246))
            .x_desc("Recall")
            .y_desc("Precision")
            .label_style((FAMILY, px * 0.8))
            .axis_desc_style((FAMILY, px * 0.9))
            .draw()
            .map_err(draw_error)?;
        let stroke = (px / 10.0).max(1.0) as u32 + 1;
        for (k, curve) in self.curves.iter().enumerate() {
            let style = palette(k).stroke_width(stroke);
            let ap = average_precision(&curve.y, &curve.scores);
            let len = crate::legend_len(px);
            chart
                .draw_series(LineSeries::new(curve.steps(), style))
                .map_err(draw_error)?
                .label(format!("{} (AP {ap:.3})", curve.label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + len, y)], style));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .legend_area_size(crate::legend_len(px) + (px * 0.5) as i32)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font((FAMILY, px * 0.8))
            .draw()
            .map_err(draw_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_by_hand_with_ties() {
        // scores 0.9 (+), 0.5 (+, -) tied, 0.1 (-): thresholds give (1/2, 1), (1, 2/3), (1, 1/2).
        let y = [true, true, false, false];
        let s = [0.9, 0.5, 0.5, 0.1];
        assert_eq!(pr_points(&y, &s), vec![(0.5, 1.0), (1.0, 2.0 / 3.0), (1.0, 0.5)]);
    }

    #[test]
    fn step_area_is_average_precision() {
        let y = [true, false, true, true, false, false, true, false];
        let s = [0.3, 0.9, 0.8, 0.1, 0.4, 0.4, 0.7, -1.0];
        let curve = PrCurve { label: "a".into(), y: y.to_vec(), scores: s.to_vec() };
        let area: f64 = curve.steps().windows(2).map(|c| (c[1].0 - c[0].0) * c[0].1).sum();
        assert!((area - average_precision(&y, &s)).abs() < 1e-12);
    }
}
