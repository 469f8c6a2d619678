//! Plots of usvm results, rendered to PNG or SVG bytes by pure Rust (`plotters` without its system-font
//! features; text is laid out with the bundled DejaVu Sans, `fonts/LICENSE-DejaVu.txt`).
//!
//! Three figures, each a plain-data description with a `render(format, width, height)` method:
//! - [`BoundaryPlot`]: 2-D training means with each Gaussian's k-σ ellipse `{μ + k L u : ‖u‖ = 1}`
//!   (`Σ = L Lᵀ`) and the decision lines `w₁x + w₂y + b = 0` of several classifiers (thesis Fig. 3.3);
//! - [`PrPlot`]: precision-recall curves of scored examples, one step curve per scorer, with its average
//!   precision ([`usvm::metrics::average_precision`]) in the legend;
//! - [`AnglePlot`]: the angle between two hyperplanes against a sample size on a log axis (thesis Fig. 3.4).
//!
//! The crate does no file I/O: callers (the `usvm plot` subcommand, the Python bindings) write the bytes.
//!
//! ```
//! use usvm_plot::{BoundaryPlot, Format, Gaussian2, Line};
//! let plot = BoundaryPlot {
//!     gaussians: vec![
//!         Gaussian2 { mean: [1.0, 1.0], cov: [[0.2, 0.1], [0.1, 0.3]], positive: true },
//!         Gaussian2 { mean: [-1.0, -1.0], cov: [[0.1, 0.0], [0.0, 0.1]], positive: false },
//!     ],
//!     lines: vec![Line { label: "LSVM".into(), w: [1.0, 1.0], b: 0.0 }],
//!     ..Default::default()
//! };
//! let svg = plot.render(Format::Svg, 400, 300).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("<svg"));
//! ```

mod angle;
mod boundary;
mod pr;

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

pub use angle::{AnglePlot, AnglePoint, AngleSeries};
pub use boundary::{BoundaryPlot, Gaussian2, Line};
pub use pr::{PrCurve, PrPlot, pr_points};

/// The bundled font (Bitstream Vera licence, see `fonts/LICENSE-DejaVu.txt`).
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
/// The family name every plot uses; registered on first use.
const FAMILY: &str = "sans-serif";

/// Smallest and largest accepted image side, in pixels.
pub const MIN_SIDE: u32 = 64;
pub const MAX_SIDE: u32 = 16384;

/// What can go wrong while plotting.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{0}: unknown plot format (use a .png or .svg file name)")]
    UnknownFormat(String),
    #[error("invalid {field} = {value}: {reason}")]
    Invalid { field: &'static str, value: String, reason: &'static str },
    #[error("nothing to plot: {0}")]
    Empty(&'static str),
    #[error("drawing failed: {0}")]
    Draw(String),
}

pub type Result<T> = std::result::Result<T, PlotError>;

fn invalid(field: &'static str, value: impl std::fmt::Display, reason: &'static str) -> PlotError {
    PlotError::Invalid { field, value: value.to_string(), reason }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// The format named by a file's extension (`.png` or `.svg`, any case).
    pub fn from_path(path: &Path) -> Result<Format> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("png") => Ok(Format::Png),
            Some("svg") => Ok(Format::Svg),
            _ => Err(PlotError::UnknownFormat(path.display().to_string())),
        }
    }

    /// The format named `png` or `svg` (any case).
    pub fn from_name(name: &str) -> Result<Format> {
        match name.to_ascii_lowercase().as_str() {
            "png" => Ok(Format::Png),
            "svg" => Ok(Format::Svg),
            _ => Err(PlotError::UnknownFormat(name.to_string())),
        }
    }
}

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled file is a valid TrueType font; the unit test `bundled_font_loads` checks it.
        if register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            panic!("the bundled DejaVu Sans font does not parse");
        }
    });
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// A result that carries drawing errors of any backend.
type DrawResult<T> = std::result::Result<T, PlotError>;

/// A figure that can draw itself on any plotters backend.
trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<()>;
}

/// Renders `figure` on a `width × height` canvas in `format` and returns the file's bytes.
fn render_figure(figure: &impl Figure, format: Format, width: u32, height: u32) -> Result<Vec<u8>> {
    for (field, side) in [("width", width), ("height", height)] {
        if !(MIN_SIDE..=MAX_SIDE).contains(&side) {
            return Err(invalid(field, side, "must be between 64 and 16384 pixels"));
        }
    }
    register_fonts();
    match format {
        Format::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (width, height)).into_drawing_area();
                root.fill(&WHITE).map_err(draw_error)?;
                figure.draw(&root)?;
                root.present().map_err(draw_error)?;
            }
            Ok(text.into_bytes())
        }
        Format::Png => {
            let mut rgb = vec![0u8; width as usize * height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
                root.fill(&WHITE).map_err(draw_error)?;
                figure.draw(&root)?;
                root.present().map_err(draw_error)?;
            }
            encode_png(&rgb, width, height)
        }
    }
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| PlotError::Draw(e.to_string()))?;
    writer.write_image_data(rgb).map_err(|e| PlotError::Draw(e.to_string()))?;
    writer.finish().map_err(|e| PlotError::Draw(e.to_string()))?;
    Ok(out)
}

/// Distinct line colours (colour-blind safe, Okabe-Ito), cycled.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

fn palette(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// A pixel size for text that scales with the canvas (readable from 300 to 3000 pixels).
fn font_px(width: u32, height: u32, scale: f64) -> f64 {
    (scale * f64::from(width.min(height)) / 30.0).clamp(9.0, 60.0)
}

/// Length in pixels of a legend's line sample.
fn legend_len(px: f64) -> i32 {
    (px * 2.2) as i32
}

/// A closed range `[lo, hi]` padded by `pad` of its length on each side (unit length if degenerate).
fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    let len = hi - lo;
    if len > 0.0 { (lo - pad * len, hi + pad * len) } else { (lo - 0.5, hi + 0.5) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_font_loads() {
        register_fonts();
        let font: FontDesc<'_> = (FAMILY, 12.0).into();
        let (w, h) = font.box_size("Precision").unwrap();
        assert!(w > 20 && h > 5, "{w}×{h}");
    }

    #[test]
    fn format_from_extension() {
        assert_eq!(Format::from_path(Path::new("a/b.PNG")).unwrap(), Format::Png);
        assert_eq!(Format::from_path(Path::new("b.svg")).unwrap(), Format::Svg);
        assert!(matches!(Format::from_path(Path::new("b.pdf")), Err(PlotError::UnknownFormat(_))));
        assert!(matches!(Format::from_path(Path::new("b")), Err(PlotError::UnknownFormat(_))));
    }
}
