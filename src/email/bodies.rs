//! The bodies `/channels/email` takes and how each applies to a channel's
//! fields, collecting every field's problem (a 400 names them all).

use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::model::{self, ImapSettings, InboundKind, SmtpSettings, SmtpTls};
use super::store::channels::ChannelFields;
use crate::error::{ApiError, FieldError};
use crate::validate::{NAME_MAX, Patch, problem};

/// Longest secret accepted (a PEM DKIM key fits).
const SECRET_MAX: usize = 8192;

/// Where mail comes in, by kind: `{kind: "imap", host, port, tls,
/// username, password, folder}`, `{kind: "mailgun", signingKey}`,
/// `{kind: "postmark"|"sendgrid", secret}` (basic auth password or URL
/// secret) or `{kind: "ses"}` (the SNS signature).
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailInboundSource)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct InboundBody {
    #[schema(schema_with = inbound_kind)]
    kind: InboundKind,
    host: Option<String>,
    port: Option<u16>,
    tls: Option<bool>,
    username: Option<String>,
    /// Write only.
    password: Option<String>,
    folder: Option<String>,
    /// Write only.
    secret: Option<String>,
    /// Write only.
    signing_key: Option<String>,
    /// `ses`: the SNS topic SES publishes to; messages of another topic
    /// are refused.
    topic_arn: Option<String>,
}

fn inbound_kind() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(InboundKind::NAMES)
}

/// The SMTP server the channel's replies leave by, instead of the
/// service's. `tls`: `starttls` (the default, port 587 unless given),
/// `implicit` (TLS from the first byte, port 465) or `none` (port 25; a
/// relay on the same host or network only). `username` and `password`
/// sign in (both or neither); a PATCH with the same `username` and no
/// `password` keeps the password.
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailSmtpIdentity)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SmtpBody {
    /// A host name or an IP address.
    #[schema(min_length = 1, max_length = 253, pattern = "^[A-Za-z0-9._:\\[\\]-]+$")]
    host: String,
    port: Option<u16>,
    #[schema(value_type = Option<String>, example = "starttls")]
    tls: Option<SmtpTls>,
    #[schema(min_length = 1, max_length = 320)]
    username: Option<String>,
    /// Write only.
    #[schema(min_length = 1, max_length = 8192)]
    password: Option<String>,
}

/// A DKIM signing key: the selector and the private key (PKCS#1 PEM for
/// RSA, or the base64 of an Ed25519 seed). Write only.
#[derive(Deserialize, ToSchema)]
#[schema(as = EmailDkimKey)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DkimBody {
    #[schema(min_length = 1)]
    selector: String,
    #[schema(min_length = 1, max_length = 8192)]
    private_key: String,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = CreateEmailChannel)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateBody {
    /// The desk's address; replies come back to `local+<token>@domain`.
    #[schema(value_type = String, format = Email, max_length = 255, required)]
    pub(super) address: Option<String>,
    pub(super) name: Option<String>,
    /// The entity tickets opened by mail belong to.
    #[schema(value_type = uuid::Uuid, required)]
    pub(super) entity_id: Option<Uuid>,
    #[schema(required)]
    pub(super) inbound: Option<InboundBody>,
    pub(super) smtp: Option<SmtpBody>,
    pub(super) dkim: Option<DkimBody>,
    /// Whether a customer's reply by mail reopens a RESOLVED ticket
    /// (default true).
    pub(super) reopen_on_customer_reply: Option<bool>,
    /// A new message from a contact whose open ticket changed within this
    /// many hours is suggested as merged into it (0 never; default 72, at
    /// most 8760).
    pub(super) case_grouping_hours: Option<u32>,
}

/// Only the fields given change; `smtp: null` or `dkim: null` removes it.
/// An `inbound` given replaces the source; of the same kind without its
/// secret, the secret stays.
#[derive(Deserialize, ToSchema)]
#[schema(as = UpdateEmailChannel)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[schema(format = Email, max_length = 255)]
    pub(super) address: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(super) name: Patch<String>,
    pub(super) entity_id: Option<Uuid>,
    pub(super) inbound: Option<InboundBody>,
    #[serde(default)]
    #[schema(value_type = Option<SmtpBody>)]
    pub(super) smtp: Patch<SmtpBody>,
    #[serde(default)]
    #[schema(value_type = Option<DkimBody>)]
    pub(super) dkim: Patch<DkimBody>,
    pub(super) reopen_on_customer_reply: Option<bool>,
    pub(super) case_grouping_hours: Option<u32>,
}

pub(super) fn refuse(errors: Vec<FieldError>) -> ApiError {
    ApiError::validation(errors)
}

fn secret(field: &str, value: Option<&str>, errors: &mut Vec<FieldError>) -> Option<String> {
    match value.map(str::trim) {
        Some("") => {
            errors.push(problem(field, "must not be empty"));
            None
        }
        Some(v) if v.len() > SECRET_MAX => {
            errors.push(problem(field, "is too long"));
            None
        }
        other => other.map(str::to_string),
    }
}

/// Applies `inbound` to `fields`; `keep` keeps the stored secret when the
/// kind is the same and none is given.
pub(super) fn apply_inbound(
    fields: &mut ChannelFields,
    inbound: InboundBody,
    keep: bool,
    errors: &mut Vec<FieldError>,
) {
    let same_kind = fields.inbound_kind == Some(inbound.kind);
    let given = match inbound.kind {
        InboundKind::Imap => {
            let host = inbound
                .host
                .map(|h| h.trim().to_string())
                .unwrap_or_default();
            let username = inbound.username.unwrap_or_default();
            if host.is_empty() {
                errors.push(problem("inbound.host", "is required for imap"));
            }
            if username.is_empty() {
                errors.push(problem("inbound.username", "is required for imap"));
            }
            let tls = inbound.tls.unwrap_or(true);
            fields.imap = Some(ImapSettings {
                host,
                port: inbound.port.unwrap_or(if tls { 993 } else { 143 }),
                tls,
                username,
                folder: inbound.folder.unwrap_or_else(|| "INBOX".into()),
            });
            secret("inbound.password", inbound.password.as_deref(), errors)
        }
        InboundKind::Mailgun => {
            secret("inbound.signingKey", inbound.signing_key.as_deref(), errors)
        }
        InboundKind::Postmark | InboundKind::Sendgrid => {
            secret("inbound.secret", inbound.secret.as_deref(), errors)
        }
        InboundKind::Ses => None,
    };
    fields.ses_topic_arn = inbound
        .topic_arn
        .map(|t| t.trim().to_string())
        .filter(|t| inbound.kind == InboundKind::Ses && !t.is_empty());
    if inbound.kind != InboundKind::Imap {
        fields.imap = None;
    }
    fields.inbound_kind = Some(inbound.kind);
    match given {
        Some(secret) => fields.inbound_secret = Some(secret),
        None if keep && same_kind => {}
        None => {
            fields.inbound_secret = None;
            let needed = match inbound.kind {
                InboundKind::Imap => Some("inbound.password"),
                InboundKind::Mailgun => Some("inbound.signingKey"),
                InboundKind::Postmark | InboundKind::Sendgrid => Some("inbound.secret"),
                InboundKind::Ses => None,
            };
            if let Some(field) = needed {
                errors.push(problem(field, "is required for this kind"));
            }
        }
    }
}

/// Longest host name (DNS's limit) and user name taken.
const HOST_MAX: usize = 253;
const USERNAME_MAX: usize = 320;

/// Applies `smtp` to `fields`: the password stays only when none is given
/// and the user name is the one it was stored with.
pub(super) fn apply_smtp(fields: &mut ChannelFields, smtp: SmtpBody, errors: &mut Vec<FieldError>) {
    let host = smtp.host.trim().to_string();
    if host.is_empty() {
        errors.push(problem("smtp.host", "must not be empty"));
    } else if host.len() > HOST_MAX
        || host
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']')))
    {
        errors.push(problem("smtp.host", "must be a host name or an IP address"));
    }
    let tls = smtp.tls.unwrap_or(SmtpTls::Starttls);
    let port = smtp.port.unwrap_or(tls.default_port());
    if port == 0 {
        errors.push(problem("smtp.port", "must be between 1 and 65535"));
    }
    let username = smtp.username.map(|u| u.trim().to_string());
    match username.as_deref() {
        Some("") => errors.push(problem("smtp.username", "must not be empty")),
        Some(u) if u.chars().count() > USERNAME_MAX => {
            errors.push(problem("smtp.username", "is too long"))
        }
        _ => {}
    }
    let password = secret("smtp.password", smtp.password.as_deref(), errors);
    let same_user = fields
        .smtp
        .as_ref()
        .is_some_and(|stored| stored.username == username);
    match (&username, password) {
        (None, Some(_)) => errors.push(problem("smtp.password", "needs smtp.username")),
        (None, None) => fields.smtp_password = None,
        (Some(_), Some(password)) => fields.smtp_password = Some(password),
        (Some(_), None) if same_user && fields.smtp_password.is_some() => {}
        (Some(_), None) => errors.push(problem("smtp.password", "is required with smtp.username")),
    }
    fields.smtp = Some(SmtpSettings {
        host,
        port,
        tls,
        username,
    });
}

/// The most hours a channel groups cases over (a year).
const CASE_GROUPING_MAX: u32 = 8760;

pub(super) fn apply_case_grouping(
    fields: &mut ChannelFields,
    hours: Option<u32>,
    errors: &mut Vec<FieldError>,
) {
    match hours {
        None => {}
        Some(hours) if hours > CASE_GROUPING_MAX => errors.push(problem(
            "caseGroupingHours",
            format!("must be at most {CASE_GROUPING_MAX}"),
        )),
        Some(hours) => fields.case_grouping_hours = hours,
    }
}

pub(super) fn apply_dkim(fields: &mut ChannelFields, dkim: DkimBody, errors: &mut Vec<FieldError>) {
    if dkim.selector.trim().is_empty() {
        errors.push(problem("dkim.selector", "must not be empty"));
    }
    fields.dkim_key = secret("dkim.privateKey", Some(&dkim.private_key), errors);
    // A key lettre cannot read is refused now, not found out when sending.
    if let Some(key) = &fields.dkim_key
        && let Err(why) = crate::mail::dkim::config(&dkim.selector, "", key)
    {
        errors.push(problem("dkim.privateKey", why));
    }
    fields.dkim_selector = Some(dkim.selector.trim().to_string());
}

pub(super) fn checked_address(raw: &str, errors: &mut Vec<FieldError>) -> String {
    model::address(raw).unwrap_or_else(|| {
        errors.push(problem("address", "must be an email address"));
        String::new()
    })
}

pub(super) fn checked_name(name: Option<String>, errors: &mut Vec<FieldError>) -> Option<String> {
    let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
    if name.as_ref().is_some_and(|n| n.chars().count() > NAME_MAX) {
        errors.push(problem("name", "is too long"));
    }
    name
}
