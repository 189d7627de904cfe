//! `Fields`: a tuple of field checks answered together, every problem listed.

use crate::error::{ApiError, FieldError};

/// What a failed check reports: one problem or several.
pub trait IntoFieldErrors {
    fn append_to(self, errors: &mut Vec<FieldError>);
}

impl IntoFieldErrors for FieldError {
    fn append_to(self, errors: &mut Vec<FieldError>) {
        errors.push(self);
    }
}

impl IntoFieldErrors for Vec<FieldError> {
    fn append_to(mut self, errors: &mut Vec<FieldError>) {
        errors.append(&mut self);
    }
}

/// A tuple of checks, each `Result<T, E: IntoFieldErrors>`.
pub trait Fields {
    type Output;

    /// Every value, or every problem in tuple order.
    fn collect_errors(self) -> Result<Self::Output, Vec<FieldError>>;

    /// Every value, or the 400 that lists every problem.
    fn all_valid(self) -> Result<Self::Output, ApiError>
    where
        Self: Sized,
    {
        self.collect_errors().map_err(ApiError::validation)
    }
}

macro_rules! tuple_fields {
    ($($value:ident: $ty:ident / $err:ident),+) => {
        impl<$($ty, $err: IntoFieldErrors),+> Fields for ($(Result<$ty, $err>,)+) {
            type Output = ($($ty,)+);

            fn collect_errors(self) -> Result<Self::Output, Vec<FieldError>> {
                let ($($value,)+) = self;
                let mut errors = Vec::new();
                $(
                    let $value = match $value {
                        Ok(value) => Some(value),
                        Err(err) => {
                            err.append_to(&mut errors);
                            None
                        }
                    };
                )+
                match ($($value,)+) {
                    ($(Some($value),)+) => Ok(($($value,)+)),
                    _ => Err(errors),
                }
            }
        }
    };
}

tuple_fields!(a: A / EA);
tuple_fields!(a: A / EA, b: B / EB);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF);
tuple_fields!(a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH
);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH,
    i: I / EI
);
tuple_fields!(
    a: A / EA, b: B / EB, c: C / EC, d: D / ED, e: E / EE, f: F / EF, g: G / EG, h: H / EH,
    i: I / EI, j: J / EJ
);
