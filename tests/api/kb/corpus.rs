//! The search corpus (30 articles) and the queries with their expected top
//! results, the same on both backends.

/// Where a corpus article lives; only `Main` articles may ever be found.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Main,
    Draft,
    OtherEntity,
    LiveMode,
    OtherCompany,
}

pub(super) struct Doc {
    pub(super) key: &'static str,
    pub(super) title: &'static str,
    pub(super) content: &'static str,
    pub(super) category: Option<&'static str>,
    pub(super) place: Place,
}

const fn doc(
    key: &'static str,
    title: &'static str,
    content: &'static str,
    category: Option<&'static str>,
    place: Place,
) -> Doc {
    Doc {
        key,
        title,
        content,
        category,
        place,
    }
}

const DECOY_TEXT: &str = "Reset any password, download an invoice, export tickets to CSV, \
     ask for a refund, keep backup codes.";

/// The search corpus: 30 articles. Decoys hold every query word in their
/// title and content, so a leak would rank them first.
pub(super) const CORPUS: &[Doc] = &[
    doc(
        "reset-password",
        "Reset your password",
        "If you forgot your password, open the sign-in page and choose **Forgot password**. \
         We email you a link that works for one hour.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "password-rules",
        "Password strength rules",
        "Choose at least twelve characters with one digit and one symbol. Longer phrases are \
         stronger than short ones, and a manager app can remember them for you.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "security-checklist",
        "Account security checklist",
        "Turn on two-step sign-in, review active sessions and change old passwords every year.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "download-invoice",
        "Download an invoice",
        "Open Billing, pick the invoice you need and press Download.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "invoice-address",
        "Invoice address changes",
        "Update the company name, postal address and tax number printed on future bills. \
         Changes apply from the next billing cycle onwards.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "payment-methods",
        "Payment methods",
        "We accept cards and bank transfers. Invoicing is available on annual plans.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "export-csv",
        "Export tickets to CSV",
        "Go to Reports and export your tickets as a CSV file.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "export-reports",
        "Export reports",
        "You can export tickets or chats to CSV from the reports page.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "data-portability",
        "Data portability",
        "Every ticket can be exported to CSV or JSON at any time.",
        None,
        Place::Main,
    ),
    doc(
        "export-chats",
        "Export chat transcripts",
        "Chat transcripts download as JSON.",
        Some("Reports"),
        Place::Main,
    ),
    doc(
        "refund-policy",
        "Refund policy",
        "Annual plans can be cancelled within thirty days of purchase.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "cancel-subscription",
        "Cancel a subscription",
        "Cancelling stops the renewal. A refund is issued for unused months; refund requests \
         take five days.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "billing-faq",
        "Billing questions",
        "Most answers about cards, currencies, taxes, receipts, discounts, coupons, seats, \
         trials and plan changes are collected here, and every refund goes back to the \
         original card within a week.",
        Some("Billing"),
        Place::Main,
    ),
    doc(
        "two-factor",
        "Two-factor authentication",
        "Protect every agent account with a second step at sign-in. Open your profile, scan \
         the QR code with an authenticator app and type the six digits it shows. From then on \
         each sign-in asks for a fresh code. Keep your backup codes somewhere safe: each one \
         works once.",
        Some("Account"),
        Place::Main,
    ),
    doc(
        "getting-started",
        "Getting started",
        "Create your first entity, invite agents and install the chat widget.",
        None,
        Place::Main,
    ),
    doc(
        "invite-team",
        "Invite your team",
        "Agents receive an email invitation and join in one click.",
        None,
        Place::Main,
    ),
    doc(
        "widget-setup",
        "Chat widget setup",
        "Paste the snippet before the closing body tag of your site.",
        None,
        Place::Main,
    ),
    doc(
        "business-hours",
        "Business hours",
        "Outside business hours the widget offers a contact form instead of live chat.",
        None,
        Place::Main,
    ),
    doc(
        "webhooks",
        "Webhooks overview",
        "Subscribe a URL to ticket events and verify each signature.",
        None,
        Place::Main,
    ),
    doc(
        "api-keys",
        "API keys",
        "Keys carry scopes and a rate limit; test keys never touch live data.",
        None,
        Place::Main,
    ),
    doc(
        "email-notifications",
        "Email notifications",
        "Visitors get an email when an agent replies or a ticket is resolved.",
        None,
        Place::Main,
    ),
    doc(
        "shortcuts",
        "Keyboard shortcuts",
        "Press the question mark in the console to list every shortcut.",
        None,
        Place::Main,
    ),
    doc(
        "languages",
        "Language settings",
        "The widget speaks the browser language of the visitor when a translation exists.",
        None,
        Place::Main,
    ),
    doc(
        "merge-tickets",
        "Merge duplicate tickets",
        "Select two tickets and choose Merge; comments move to the surviving one.",
        None,
        Place::Main,
    ),
    doc(
        "draft-password",
        "Password reset for admins",
        DECOY_TEXT,
        Some("Account"),
        Place::Draft,
    ),
    doc(
        "draft-invoice",
        "Invoice export refund draft",
        DECOY_TEXT,
        None,
        Place::Draft,
    ),
    doc(
        "other-entity",
        "Password reset elsewhere",
        DECOY_TEXT,
        None,
        Place::OtherEntity,
    ),
    doc(
        "live-mode",
        "Password reset in live mode",
        DECOY_TEXT,
        None,
        Place::LiveMode,
    ),
    doc(
        "live-invoice",
        "Invoice export refund live",
        DECOY_TEXT,
        None,
        Place::LiveMode,
    ),
    doc(
        "other-company",
        "Password reset of another company",
        DECOY_TEXT,
        None,
        Place::OtherCompany,
    ),
];

/// Queries and their expected top results, in order, on both backends.
pub(super) const QUERIES: &[(&str, &[&str])] = &[
    // Title matches above content-only ones; stemming (passwords).
    (
        "password",
        &["reset-password", "password-rules", "security-checklist"],
    ),
    (
        "Passwords",
        &["reset-password", "password-rules", "security-checklist"],
    ),
    // Search as you type: the last word is a prefix; stop words are ignored.
    ("how do I reset my passw", &["reset-password"]),
    (
        "invoi",
        &["download-invoice", "invoice-address", "payment-methods"],
    ),
    // Multi-word: every word must match.
    (
        "export tickets csv",
        &["export-csv", "export-reports", "data-portability"],
    ),
    (
        "refund",
        &["refund-policy", "cancel-subscription", "billing-faq"],
    ),
    ("backup codes", &["two-factor"]),
    ("zebra", &[]),
];
