//! The builders' setters, which are all alike: take a value, store it (maybe adjusted),
//! return the builder.

/// Builder setters: each `/// doc` and `name(arg: Type) => field = value;` becomes
/// `pub fn name(mut self, arg: Type) -> Self`, which sets `self.field = value` and returns
/// `self`.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $field:ident = $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, $arg: $ty) -> Self {
                self.$field = $value;
                self
            }
        )*
    };
}
pub(crate) use setters;
