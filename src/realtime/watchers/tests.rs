use super::*;
use crate::auth::Mode;

fn seat(ticket_id: Uuid, user_id: Uuid, socket: u64) -> Seat {
    Seat {
        tenant: Tenant::new(Uuid::nil(), Mode::Test),
        ticket_id,
        user_id,
        socket,
    }
}

fn advance(clock: &Clock, by: Duration) {
    clock.advance(chrono::TimeDelta::from_std(by).expect("duration"));
}

#[test]
fn a_refresh_changes_nothing() {
    let watchers = Watchers::new(Clock::default());
    let ann = seat(Uuid::now_v7(), Uuid::now_v7(), 1);

    let (_, first) = watchers.view(ann, "Ann");
    let (state, again) = watchers.view(ann, "Ann");

    assert_eq!((first, again), (true, false));
    assert!(state.viewing && !state.typing);
}

#[test]
fn an_agent_in_two_tabs_views_until_both_leave() {
    let watchers = Watchers::new(Clock::default());
    let (ticket, ann) = (Uuid::now_v7(), Uuid::now_v7());
    watchers.view(seat(ticket, ann, 1), "Ann");
    watchers.view(seat(ticket, ann, 2), "Ann");

    let (_, first_left) = watchers.leave(seat(ticket, ann, 1), "Ann");
    let (state, second_left) = watchers.leave(seat(ticket, ann, 2), "Ann");

    assert_eq!((first_left, second_left), (false, true));
    assert!(!state.viewing);
}

#[test]
fn typing_and_viewing_expire_by_the_clock() {
    let clock = Clock::default();
    let watchers = Watchers::new(clock.clone());
    let ann = seat(Uuid::now_v7(), Uuid::now_v7(), 1);
    watchers.type_on(ann, "Ann");

    advance(&clock, TYPING_TTL);
    let typing_over = watchers.sweep();
    advance(&clock, VIEWING_TTL);
    let viewing_over = watchers.sweep();

    let flags = |changes: &[(Tenant, Viewer)]| -> Vec<(bool, bool)> {
        changes.iter().map(|(_, v)| (v.viewing, v.typing)).collect()
    };
    assert_eq!(flags(&typing_over), vec![(true, false)]);
    assert_eq!(flags(&viewing_over), vec![(false, false)]);
    assert!(watchers.viewers(ann.tenant, ann.ticket_id).is_empty());
}

#[test]
fn a_closed_socket_leaves_every_ticket_it_viewed() {
    let watchers = Watchers::new(Clock::default());
    let ann = Uuid::now_v7();
    let (first, second) = (Uuid::now_v7(), Uuid::now_v7());
    watchers.view(seat(first, ann, 7), "Ann");
    watchers.type_on(seat(second, ann, 7), "Ann");

    let mut left: Vec<Uuid> = watchers
        .release(7)
        .into_iter()
        .filter(|(_, v)| !v.viewing && !v.typing)
        .map(|(_, v)| v.ticket_id)
        .collect();
    left.sort();

    let mut expected = vec![first, second];
    expected.sort();
    assert_eq!(left, expected);
}
