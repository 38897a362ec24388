//! Token usage reported on `RUN_FINISHED` and `RUN_ERROR`.

use crate::serde_util::{count, nn, wire_struct};
use serde::{Deserialize, Serialize};

wire_struct! {
    /// Token counts for one provider and model. Every count is a total or a named part of one.
    ///
    /// ```
    /// use aguikit_core::TokenUsage;
    /// let u: TokenUsage = serde_json::from_str(r#"{"provider":"openai","inputTokens":10,"outputTokens":5}"#).unwrap();
    /// assert_eq!(u.input_tokens, Some(10));
    /// assert!(serde_json::from_str::<TokenUsage>(r#"{"inputTokens":-1}"#).is_err());
    /// ```
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub struct TokenUsage {
        /// Lowercase vendor id.
        pub provider: Option<String> ["nn"],
        /// Model name.
        pub model: Option<String> ["nn"],
        /// Prompt tokens, cache reads and writes included.
        pub input_tokens: Option<u64> ["count"],
        /// Generated tokens, reasoning included.
        pub output_tokens: Option<u64> ["count"],
        /// Input plus output.
        pub total_tokens: Option<u64> ["count"],
        /// Part of output tokens.
        pub reasoning_tokens: Option<u64> ["count"],
        /// Part of input tokens (cache reads).
        pub cached_input_tokens: Option<u64> ["count"],
        /// Part of input tokens (cache writes).
        pub cache_write_input_tokens: Option<u64> ["count"],
    }
}

/// Sums entries per (provider, model) in first-appearance order, leaving a count absent
/// when no entry had it (the reference `aggregateTokenUsage`).
pub fn aggregate_token_usage(entries: &[TokenUsage]) -> Vec<TokenUsage> {
    let mut out: Vec<TokenUsage> = Vec::new();
    for e in entries {
        let slot = match out
            .iter_mut()
            .position(|o| o.provider == e.provider && o.model == e.model)
        {
            Some(i) => &mut out[i],
            None => {
                out.push(TokenUsage {
                    provider: e.provider.clone(),
                    model: e.model.clone(),
                    ..Default::default()
                });
                out.last_mut().expect("just pushed")
            }
        };
        let add = |a: &mut Option<u64>, b: Option<u64>| {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0) + b);
            }
        };
        add(&mut slot.input_tokens, e.input_tokens);
        add(&mut slot.output_tokens, e.output_tokens);
        add(&mut slot.total_tokens, e.total_tokens);
        add(&mut slot.reasoning_tokens, e.reasoning_tokens);
        add(&mut slot.cached_input_tokens, e.cached_input_tokens);
        add(
            &mut slot.cache_write_input_tokens,
            e.cache_write_input_tokens,
        );
    }
    out
}
