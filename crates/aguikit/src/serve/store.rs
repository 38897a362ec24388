//! The store `agui serve` keeps threads in: its default location, connection threads
//! and how it is shown.

/// Connection threads when `--threads` is not given: one per core, so that a run, the
/// memory store's or SQLite writer's hand-offs and its socket wake no other runtime
/// thread; none with PostgreSQL, whose pooled connections and group writers are tasks of
/// the shared runtime: a run woken by them is best run where they are (with a thread per
/// core, `agui load` measured 3-6% fewer runs per second there, and 10-13% more with the
/// memory and SQLite stores).
pub(super) fn default_threads(locator: &str) -> usize {
    if aguikit_store::is_postgres(locator) {
        0
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The default store: SQLite in the user's data directory (created if missing), or memory
/// (with a warning) when neither `$XDG_DATA_HOME` nor `$HOME` is set. Returns the locator
/// and, for the memory fallback, a warning to print.
pub fn default_store(
    xdg_data_home: Option<&str>,
    home: Option<&str>,
) -> Result<(String, Option<String>), String> {
    let dir = match (
        xdg_data_home.filter(|s| !s.is_empty()),
        home.filter(|s| !s.is_empty()),
    ) {
        (Some(xdg), _) => std::path::PathBuf::from(xdg).join("agui"),
        (None, Some(home)) => std::path::PathBuf::from(home).join(".local/share/agui"),
        (None, None) => {
            return Ok((
                "memory".into(),
                Some(
                    "warning: neither $XDG_DATA_HOME nor $HOME is set; threads are kept in memory \
                     and lost when the server stops (use --store sqlite:PATH to keep them)"
                        .into(),
                ),
            ));
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok((
        format!("sqlite:{}", dir.join("agui.sqlite3").display()),
        None,
    ))
}

/// The store as shown in the startup lines: a PostgreSQL URL without its password.
pub(super) fn describe_store(locator: &str) -> String {
    if let Some((scheme, rest)) = locator.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && let Some((user, _password)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    locator.to_owned()
}
