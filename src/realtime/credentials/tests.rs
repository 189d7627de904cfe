//! How a key's record decides its sockets' rights, and the notices' wire form.

use super::*;
use crate::time::Timestamp;

fn record(change: impl FnOnce(&mut KeyForAuth)) -> KeyForAuth {
    let mut record = KeyForAuth {
        id: Uuid::now_v7(),
        name: "test key".to_string(),
        company_id: Uuid::now_v7(),
        mode: crate::auth::Mode::Test,
        scopes: crate::auth::ScopeSet::all(),
        rate_limit: 10,
        expires_at: None,
        is_active: true,
        last_used_at: None,
        company_status: CompanyStatus::Active,
        db_now: Timestamp::now(),
        user_id: None,
        owner_name: None,
        owner_active: None,
        owner_role_name: None,
        owner_custom_scopes: None,
        owner_teams_only: None,
    };
    change(&mut record);
    record
}

#[test]
fn a_keys_record_decides_what_its_sockets_may_do() {
    let id = Uuid::now_v7();
    let ended = |ending| Notice::KeyEnded { key_id: id, ending };
    assert_eq!(Notice::for_key(id, None), ended(Ending::Revoked));
    let past = Timestamp::from_datetime(chrono::Utc::now() - chrono::Duration::seconds(1));
    let cases = [
        (
            record(|r| r.expires_at = Some(past)),
            ended(Ending::Expired),
        ),
        (record(|r| r.is_active = false), ended(Ending::Deactivated)),
        (
            record(|r| r.company_status = CompanyStatus::Suspended),
            ended(Ending::CompanySuspended),
        ),
        (
            record(|r| r.scopes = crate::auth::ScopeSet::from_scopes([Scope::ChatWrite])),
            ended(Ending::ScopeRemoved),
        ),
        (
            record(|r| r.scopes = crate::auth::ScopeSet::from_scopes([Scope::ChatRead])),
            Notice::KeyValid {
                key_id: id,
                may_write: false,
                tickets: TicketReads::Nothing,
            },
        ),
        (
            record(|r| {
                r.scopes = crate::auth::ScopeSet::from_scopes([Scope::ChatRead, Scope::TicketsRead])
            }),
            Notice::KeyValid {
                key_id: id,
                may_write: false,
                tickets: TicketReads::Public,
            },
        ),
        (
            record(|_| {}),
            Notice::KeyValid {
                key_id: id,
                may_write: true,
                tickets: TicketReads::Notes,
            },
        ),
    ];
    for (record, notice) in cases {
        assert_eq!(Notice::for_key(id, Some(&record)), notice);
    }
}

#[test]
fn notices_round_trip() {
    let id = Uuid::now_v7();
    let mut notices: Vec<Notice> = Ending::ALL
        .into_iter()
        .map(|ending| Notice::KeyEnded { key_id: id, ending })
        .collect();
    for tickets in [
        TicketReads::Nothing,
        TicketReads::Public,
        TicketReads::Notes,
    ] {
        for may_write in [true, false] {
            notices.push(Notice::KeyValid {
                key_id: id,
                may_write,
                tickets,
            });
            notices.push(Notice::SessionValid {
                session_id: id,
                may_write,
                tickets,
            });
        }
    }
    notices.push(Notice::CompanySuspended { company_id: id });
    notices.push(Notice::SessionEnded { session_id: id });
    notices.push(Notice::SessionScopeRemoved { session_id: id });
    notices.push(Notice::VisitorTokensRevoked {
        session_id: id,
        nonce: 3,
    });
    notices.push(Notice::IdentitySecretRotated {
        entity_id: id,
        current: crate::realtime::token::fingerprint("wis_secret"),
    });
    for notice in notices {
        assert_eq!(Notice::decode(&notice.encode()), Some(notice));
    }
    assert_eq!(Notice::decode(&format!("key-valid:{id}:2:0")), None);
    assert_eq!(Notice::decode(&format!("key-valid:{id}:1:3")), None);
    // The older form without ticket reads is left to the re-check.
    assert_eq!(Notice::decode(&format!("key-valid:{id}:1")), None);
    assert_eq!(Notice::decode("key-ended:nope:revoked"), None);
    assert_eq!(Notice::decode(&format!("visitor-revoked:{id}:x")), None);
    assert_eq!(Notice::decode(&format!("secret-rotated:{id}:00ff")), None);
}
