//! The `agui` command-line tool.

fn main() {
    println!("agui: under construction");
}
