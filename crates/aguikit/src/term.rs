//! Terminal niceties: colours (on a terminal only, never with `NO_COLOR`) and a small
//! progress bar on standard error (on a terminal only), so piped output stays plain.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// When to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When standard output is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Whether to colour, given the choice and the surroundings.
pub fn colours_wanted(choice: ColorChoice, stdout_is_terminal: bool, no_color: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && !no_color,
    }
}

/// Applies ANSI styles, or nothing when colours are off.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    on: bool,
}

/// The styles used by the commands (`anstyle`: the escape codes are written by it).
pub mod sgr {
    use anstyle::{AnsiColor, Style};

    const fn fg(color: AnsiColor) -> Style {
        Style::new().fg_color(Some(anstyle::Color::Ansi(color)))
    }

    /// Bold.
    pub const BOLD: Style = Style::new().bold();
    /// Faint.
    pub const DIM: Style = Style::new().dimmed();
    /// Red.
    pub const RED: Style = fg(AnsiColor::Red);
    /// Green.
    pub const GREEN: Style = fg(AnsiColor::Green);
    /// Yellow.
    pub const YELLOW: Style = fg(AnsiColor::Yellow);
    /// Blue.
    pub const BLUE: Style = fg(AnsiColor::Blue);
    /// Magenta.
    pub const MAGENTA: Style = fg(AnsiColor::Magenta);
    /// Cyan.
    pub const CYAN: Style = fg(AnsiColor::Cyan);
    /// Bold red.
    pub const BOLD_RED: Style = fg(AnsiColor::Red).bold();
    /// Bright black (grey).
    pub const GREY: Style = fg(AnsiColor::BrightBlack);
}

impl Paint {
    /// Colours on or off.
    pub fn new(on: bool) -> Self {
        Paint { on }
    }

    /// For standard output, following `choice`, the terminal and `NO_COLOR`.
    pub fn for_stdout(choice: ColorChoice) -> Self {
        Paint::new(colours_wanted(
            choice,
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").is_some(),
        ))
    }

    /// `text` in `style` (plain when colours are off or the style is plain).
    pub fn paint(&self, style: anstyle::Style, text: &str) -> String {
        if self.on && style != anstyle::Style::new() {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }
}

/// What a progress bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Things (runs, events).
    Count,
    /// Bytes (shown in KiB/MiB/GiB).
    Bytes,
}

/// A one-line progress bar redrawn in place on standard error, at most every 80 ms.
/// Disabled (every call a no-op) unless standard error is a terminal.
pub struct ProgressBar {
    label: String,
    total: u64,
    done: u64,
    unit: Unit,
    out: Option<Box<dyn Write + Send>>,
    started: Instant,
    last_draw: Option<Instant>,
}

/// Width of the bar itself, in cells.
const BAR_CELLS: usize = 24;

impl ProgressBar {
    /// A bar on standard error when it is a terminal, else a disabled one.
    pub fn stderr(label: &str, total: u64, unit: Unit) -> Self {
        let out: Option<Box<dyn Write + Send>> = if std::io::stderr().is_terminal() {
            Some(Box::new(std::io::stderr()))
        } else {
            None
        };
        ProgressBar::to(out, label, total, unit)
    }

    /// A bar drawn on `out` (`None`: disabled).
    pub fn to(out: Option<Box<dyn Write + Send>>, label: &str, total: u64, unit: Unit) -> Self {
        ProgressBar {
            label: label.to_owned(),
            total,
            done: 0,
            unit,
            out,
            started: Instant::now(),
            last_draw: None,
        }
    }

    /// Sets how much is done, redrawing when the last draw is old enough.
    pub fn set(&mut self, done: u64) {
        self.done = done.min(self.total);
        if self.out.is_none() {
            return;
        }
        let due = self
            .last_draw
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(80));
        if due || self.done == self.total {
            self.draw();
        }
    }

    /// Adds to how much is done.
    pub fn inc(&mut self, n: u64) {
        self.set(self.done.saturating_add(n));
    }

    fn draw(&mut self) {
        let line = self.render(self.started.elapsed());
        if let Some(out) = self.out.as_mut() {
            let _ = write!(out, "\r\x1b[2K{line}");
            let _ = out.flush();
        }
        self.last_draw = Some(Instant::now());
    }

    /// The line for the current count, `elapsed` after the start.
    pub fn render(&self, elapsed: Duration) -> String {
        let fraction = if self.total == 0 {
            1.0
        } else {
            self.done as f64 / self.total as f64
        };
        let filled = ((fraction * BAR_CELLS as f64).round() as usize).min(BAR_CELLS);
        let bar = format!("{}{}", "█".repeat(filled), "░".repeat(BAR_CELLS - filled));
        let secs = elapsed.as_secs_f64();
        let rate = if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        };
        let (done, total, rate) = match self.unit {
            Unit::Count => (
                self.done.to_string(),
                self.total.to_string(),
                format!("{rate:.0}/s"),
            ),
            Unit::Bytes => (
                human_bytes(self.done),
                human_bytes(self.total),
                format!("{}/s", human_bytes(rate as u64)),
            ),
        };
        format!(
            "{} {bar} {:>3}% {done}/{total} {rate}",
            self.label,
            (fraction * 100.0).floor() as u32
        )
    }

    /// Clears the line (the bar leaves nothing behind).
    pub fn finish(&mut self) {
        if let Some(out) = self.out.as_mut()
            && self.last_draw.is_some()
        {
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
        }
        self.out = None;
    }
}

impl Drop for ProgressBar {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `1536` → `1.5 KiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn colours_only_on_a_terminal_without_no_color() {
        assert!(colours_wanted(ColorChoice::Auto, true, false));
        assert!(!colours_wanted(ColorChoice::Auto, false, false));
        assert!(!colours_wanted(ColorChoice::Auto, true, true));
        assert!(colours_wanted(ColorChoice::Always, false, true));
        assert!(!colours_wanted(ColorChoice::Never, true, false));
        assert_eq!(Paint::new(false).paint(sgr::RED, "x"), "x");
        assert_eq!(Paint::new(true).paint(sgr::RED, "x"), "\x1b[31mx\x1b[0m");
    }

    #[test]
    fn bar_renders_counts_and_bytes() {
        let mut bar = ProgressBar::to(None, "runs", 50, Unit::Count);
        bar.set(25);
        let line = bar.render(Duration::from_secs(5));
        assert!(line.starts_with("runs "), "{line}");
        assert!(line.contains(" 50% 25/50 5/s"), "{line}");
        assert_eq!(line.matches('█').count(), BAR_CELLS / 2, "{line}");
        let mut bytes = ProgressBar::to(None, "reading", 3 << 20, Unit::Bytes);
        bytes.set(3 << 20);
        let line = bytes.render(Duration::from_secs(1));
        assert!(line.contains("100% 3.0 MiB/3.0 MiB 3.0 MiB/s"), "{line}");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12), "12 B");
    }

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn bar_redraws_in_place_and_clears_itself() {
        let sink = Sink::default();
        let mut bar = ProgressBar::to(Some(Box::new(sink.clone())), "runs", 3, Unit::Count);
        for _ in 0..3 {
            bar.inc(1);
        }
        bar.finish();
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("\r\x1b[2Kruns "), "{text:?}");
        // The last count is always drawn, then the line is cleared.
        assert!(text.contains("3/3"), "{text:?}");
        assert!(text.ends_with("\r\x1b[2K"), "{text:?}");
        assert!(!text.contains('\n'));
    }

    #[test]
    fn a_disabled_bar_writes_nothing() {
        let mut bar = ProgressBar::to(None, "x", 10, Unit::Count);
        bar.inc(10);
        bar.finish();
        assert!(bar.out.is_none());
    }
}
