//! Input rules shared by every area (docs/api.md, "Errors"): trimmed strings
//! with length limits, exact enum values, emails, ids, pagination. Each field
//! check returns the parsed value or its `FieldError`; `Fields::all_valid`
//! over a tuple of checks returns every value, or one 400 that lists every
//! problem in `details`, in the order of the tuple.

mod field;
mod fields;
mod page;
mod patch;

pub use field::{
    NAME_MAX, ensure, is_plausible_email, optional_email, optional_enum, optional_id,
    optional_text, problem, required_enum, required_id, required_text,
};
pub use fields::{Fields, IntoFieldErrors};
pub use page::{Page, PageQuery, Paged};
pub use patch::Patch;

#[cfg(test)]
mod tests {
    use super::*;
    use vocab::text_enum;

    text_enum! {
        enum Level {
            Low = "LOW",
            High = "HIGH",
        }
    }

    #[test]
    fn valid_fields_come_back_parsed() {
        let checked = (
            required_text("subject", Some("  hi "), 255),
            optional_enum::<Level>("priority", Some("HIGH")),
            required_id("entityId", Some("018f0000-0000-7000-8000-000000000000")),
            optional_email("email", None),
        )
            .all_valid()
            .expect("all valid");
        assert_eq!(checked.0, "hi");
        assert_eq!(checked.1, Some(Level::High));
        assert_eq!(checked.3, None);
        assert_eq!(Level::ALL, &[Level::Low, Level::High]);
    }

    #[test]
    fn every_problem_is_listed_in_tuple_order() {
        let err = (
            required_text("subject", Some("ok"), 255),
            required_text("name", Some("   "), 255),
            optional_enum::<Level>("priority", Some("low")),
            optional_email("email", Some("not-an-email")),
            optional_text("body", Some("a\0b"), 255),
            required_id("entityId", None),
            Page::check(Some("0"), Some("x"), 20, 100),
        )
            .all_valid()
            .expect_err("six fields are wrong");
        let listed: Vec<(&str, &str)> = err
            .details
            .iter()
            .map(|d| (d.field.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("name", "must not be empty"),
                ("priority", "must be one of: LOW, HIGH"),
                ("email", "must be a valid email address"),
                ("body", "must not contain NUL characters"),
                ("entityId", "is required"),
                ("limit", "must be at least 1"),
                ("offset", "must be a whole number"),
            ]
        );
        assert_eq!(err.code.as_str(), "validation_failed");
    }
}
