//! Standard output, the one path every command writes its output through.
//!
//! A reader that goes away (`agui check URL --format sarif | head -c 300`, `agui decode big |
//! head`) ends the output: the command stops there, quietly, with exit code 0, as the
//! standard Unix tools do. Rust's standard library ignores `SIGPIPE`, so a write to a closed
//! pipe fails with `EPIPE`, on which `println!` panics (exit 101): no command uses it.
//! Any other write error (a full disk) is reported with exit code 2.

use std::io::{BufWriter, StdoutLock, Write};

/// Standard output, buffered in blocks of 64 KiB. Its writes never fail with
/// [`std::io::ErrorKind::BrokenPipe`]: a closed pipe ends the process (see [`closed`]).
pub type Stdout = Output<BufWriter<StdoutLock<'static>>>;

/// Standard output, buffered; flush it before waiting for input, to follow a live input.
pub fn stdout() -> Stdout {
    Output(BufWriter::with_capacity(
        64 * 1024,
        std::io::stdout().lock(),
    ))
}

/// A writer whose reader going away ends the process quietly (exit 0): wraps standard
/// output, or a writer over it.
pub struct Output<W: Write>(pub W);

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(ended)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_all(buf).map_err(ended)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(ended)
    }
}

impl<W: Write> Drop for Output<W> {
    fn drop(&mut self) {
        // What is still buffered goes out now, where a closed pipe is still noticed.
        let _ = self.flush();
    }
}

/// `e`, unless it says the reader has gone: then the output is over ([`closed`]).
fn ended(e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        closed();
    }
    e
}

/// The reader of standard output has gone: nothing more can be shown, so the command is
/// over. Logs are flushed and the process ends with exit code 0.
pub fn closed() -> ! {
    crate::observe::flush_logs();
    std::process::exit(0)
}

/// Writes `text` whole to standard output and flushes it; a closed pipe ends the process
/// quietly, any other error ends it with exit code 2.
pub fn print(text: &str) {
    let mut out = Output(std::io::stdout().lock());
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        eprintln!("agui: writing the output: {e}");
        crate::observe::flush_logs();
        std::process::exit(2);
    }
}

/// `println!` through [`print()`]: a closed standard output ends the command quietly.
macro_rules! outln {
    () => {
        $crate::out::print("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::print(&format!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// `print!` through [`print()`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::print(&format!($($arg)*))
    };
}
pub(crate) use out;
