-- Contacts and organisations (issue 53): one record per person the desk
-- talks to, matched from the identities and emails tickets and chats
-- arrive with, and the companies those people belong to.

CREATE TABLE organizations (
    id            BLOB PRIMARY KEY,
    company_id    BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name          TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    custom_fields TEXT NOT NULL DEFAULT '{}',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX organizations_list ON organizations (company_id, mode, created_at DESC, id DESC);

-- A domain belongs to one organisation of the tenant: a contact with an
-- email there joins it.
CREATE TABLE organization_domains (
    company_id      BLOB NOT NULL,
    mode            TEXT NOT NULL,
    domain          TEXT NOT NULL,
    organization_id BLOB NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode, domain)
);
CREATE INDEX organization_domains_of ON organization_domains (organization_id, position);

CREATE TABLE contacts (
    id              BLOB PRIMARY KEY,
    company_id      BLOB NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
    name            TEXT CHECK (length(name) <= 255),
    phone           TEXT CHECK (length(phone) <= 64),
    organization_id BLOB REFERENCES organizations (id) ON DELETE SET NULL,
    custom_fields   TEXT NOT NULL DEFAULT '{}',
    -- A JSON array of tags, sorted.
    tags            TEXT NOT NULL DEFAULT '[]',
    notes           TEXT CHECK (length(notes) <= 10000),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX contacts_list ON contacts (company_id, mode, created_at DESC, id DESC);
CREATE INDEX contacts_of_organization ON contacts (organization_id, created_at DESC, id DESC)
    WHERE organization_id IS NOT NULL;

-- An email belongs to one contact of the tenant, stored lower-cased (the
-- match is case-insensitive), with its domain for organisations.
CREATE TABLE contact_emails (
    company_id  BLOB NOT NULL,
    mode        TEXT NOT NULL,
    email       TEXT NOT NULL CHECK (length(email) <= 255),
    domain      TEXT NOT NULL,
    contact_id  BLOB NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    PRIMARY KEY (company_id, mode, email)
);
CREATE INDEX contact_emails_of ON contact_emails (contact_id, position);
CREATE INDEX contact_emails_domain ON contact_emails (company_id, mode, domain);

-- A verified widget identity (the customer's own user id) belongs to one
-- contact of the tenant; a merge gives the merged contact's to the other.
CREATE TABLE contact_identities (
    company_id  BLOB NOT NULL,
    mode        TEXT NOT NULL,
    external_id TEXT NOT NULL,
    contact_id  BLOB NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (company_id, mode, external_id)
);
CREATE INDEX contact_identities_of ON contact_identities (contact_id, created_at);

-- The contact a ticket or a chat is from; deleting the contact leaves the
-- record without one.
ALTER TABLE tickets ADD COLUMN contact_id BLOB REFERENCES contacts (id) ON DELETE SET NULL;
CREATE INDEX tickets_of_contact ON tickets (contact_id, created_at DESC, id DESC)
    WHERE contact_id IS NOT NULL;
ALTER TABLE chat_sessions ADD COLUMN contact_id BLOB REFERENCES contacts (id) ON DELETE SET NULL;
CREATE INDEX chat_sessions_of_contact ON chat_sessions (contact_id, created_at DESC, id DESC)
    WHERE contact_id IS NOT NULL;
