//! JSON equality as the reference's `test` operation sees it.

use serde_json::Value;

use super::node::{Items, Members, Node, View};

/// JSON equality as the reference's `test` sees it: numbers by value (`1` equals `1.0`,
/// compared as IEEE doubles like JavaScript), objects regardless of key order.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    node_equal(a, b)
}

/// [`json_equal`] between any [`Node`] and a `Value`.
pub(crate) fn node_equal<N: Node>(a: &N, b: &Value) -> bool {
    match (a.view(), b) {
        (View::Null, Value::Null) => true,
        (View::Bool(x), Value::Bool(y)) => x == *y,
        (View::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (View::String(x), Value::String(y)) => x == y,
        (View::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| node_equal(a, b))
        }
        (View::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| node_equal(v, w)))
        }
        _ => false,
    }
}
