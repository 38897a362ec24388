//! Consume AG-UI agents over HTTP: `HttpAgent`, sessions, middleware and resume.
