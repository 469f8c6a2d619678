//! An angle (degrees) against a sample size on a logarithmic axis: the thesis' Fig. 3.4, the angle between
//! the LSVM-GSU hyperplane and LSVM trained on N samples per Gaussian.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::{DrawResult, FAMILY, Figure, Format, PlotError, Result, draw_error, font_px, invalid, palette};

/// One point: the angle at sample size `n`, with an optional spread `[low, high]` drawn as a whisker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnglePoint {
    pub n: f64,
    pub angle: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// One curve (e.g. "2-D").
#[derive(Debug, Clone, PartialEq)]
pub struct AngleSeries {
    pub label: String,
    pub points: Vec<AnglePoint>,
}

/// The figure: curves, plus reference points `(label, n, angle)` drawn as open diamonds (e.g. the
/// paper's reported values).
#[derive(Debug, Clone, PartialEq)]
pub struct AnglePlot {
    pub series: Vec<AngleSeries>,
    pub references: Vec<(String, f64, f64)>,
    pub title: Option<String>,
    pub x_label: String,
    pub y_label: String,
}

impl Default for AnglePlot {
    fn default() -> Self {
        AnglePlot {
            series: Vec::new(),
            references: Vec::new(),
            title: None,
            x_label: "N (samples per Gaussian)".into(),
            y_label: "angle θ (degrees)".into(),
        }
    }
}

impl AnglePlot {
    fn validate(&self) -> Result<()> {
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(PlotError::Empty("no angle points"));
        }
        let points = self.series.iter().flat_map(|s| s.points.iter());
        for p in points {
            if !(p.n > 0.0 && p.n.is_finite()) {
                return Err(invalid("n", p.n, "must be positive and finite (log axis)"));
            }
            for v in [Some(p.angle), p.low, p.high].into_iter().flatten() {
                if !v.is_finite() {
                    return Err(invalid("angle", v, "must be finite"));
                }
            }
        }
        for (label, n, a) in &self.references {
            if !(*n > 0.0 && n.is_finite() && a.is_finite()) {
                return Err(invalid("reference", label, "needs a positive finite n and a finite angle"));
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

impl Figure for AnglePlot {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()> {
        let (width, height) = root.dim_in_pixel();
        let px = font_px(width, height, 1.0);
        let ns =
            self.series.iter().flat_map(|s| s.points.iter().map(|p| p.n)).chain(self.references.iter().map(|r| r.1));
        let (nlo, nhi) = ns.fold((f64::INFINITY, 0.0f64), |(a, b), n| (a.min(n), b.max(n)));
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [Some(p.angle), p.low, p.high]))
            .flatten()
            .chain(self.references.iter().map(|r| r.2));
        let ymax = ys.fold(0.0f64, f64::max);
        let (xlo, xhi) = if nhi > nlo { (nlo / 1.5, nhi * 1.5) } else { (nlo / 10.0, nlo * 10.0) };
        let ytop = if ymax > 0.0 { ymax * 1.06 } else { 1.0 };

        let mut builder = ChartBuilder::on(root);
        builder.margin((px * 0.8) as u32).x_label_area_size((px * 2.6) as u32).y_label_area_size((px * 3.0) as u32);
        if let Some(title) = &self.title {
            builder.caption(title, (FAMILY, px * 1.2));
        }
        let mut chart = builder.build_cartesian_2d((xlo..xhi).log_scale(), 0.0..ytop).map_err(draw_error)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(246, 246, 246))
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| {
                let e = v.log10().round();
                if (v.log10() - e).abs() < 1e-9 { format!("1e{e}") } else { format!("{v}") }
            })
            .label_style((FAMILY, px * 0.8))
            .axis_desc_style((FAMILY, px * 0.9))
            .draw()
            .map_err(draw_error)?;

        let stroke = (px / 10.0).max(1.0) as u32 + 1;
        let r = (px * 0.3) as i32;
        let leg = crate::legend_len(px);
        for (k, s) in self.series.iter().enumerate() {
            let color = palette(k);
            let style = color.stroke_width(stroke);
            let whiskers = s.points.iter().filter_map(|p| Some((p.n, p.low?, p.high?)));
            chart
                .draw_series(
                    whiskers
                        .map(|(n, lo, hi)| PathElement::new(vec![(n, lo), (n, hi)], color.mix(0.5).stroke_width(1))),
                )
                .map_err(draw_error)?;
            chart
                .draw_series(LineSeries::new(s.points.iter().map(|p| (p.n, p.angle)), style))
                .map_err(draw_error)?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (leg, 0)], style)
                        + Circle::new((leg / 2, 0), r, color.filled())
                });
            chart
                .draw_series(s.points.iter().map(|p| Circle::new((p.n, p.angle), r, color.filled())))
                .map_err(draw_error)?;
        }
        for (j, (label, n, a)) in self.references.iter().enumerate() {
            let color = palette(j);
            let style = color.stroke_width(stroke);
            let d = (1.6 * r as f64) as i32;
            let shape = vec![(0, -d), (d, 0), (0, d), (-d, 0), (0, -d)];
            let shape2 = shape.clone();
            chart
                .draw_series(std::iter::once(EmptyElement::at((*n, *a)) + PathElement::new(shape, style)))
                .map_err(draw_error)?
                .label(label.as_str())
                .legend(move |(x, y)| EmptyElement::at((x + leg / 2, y)) + PathElement::new(shape2.clone(), style));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .legend_area_size(crate::legend_len(px) + (px * 0.5) as i32)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font((FAMILY, px * 0.8))
            .draw()
            .map_err(draw_error)?;
        Ok(())
    }
}
