//! A ticket's closed sets that other areas speak too: the SLA counts by
//! status and priority, the API schema lists them, a comment's author type
//! decides which SLA clock a comment moves.

crate::text_enum! {
    pub enum TicketStatus {
        Open = "OPEN",
        InProgress = "IN_PROGRESS",
        /// Waiting on the customer: an addition to the four statuses, on
        /// which SLA resolution clocks pause.
        Pending = "PENDING",
        Resolved = "RESOLVED",
        Closed = "CLOSED",
    }
}

crate::text_enum! {
    pub enum Priority {
        Low = "LOW",
        Medium = "MEDIUM",
        High = "HIGH",
        Urgent = "URGENT",
    }
}

crate::text_enum! {
    /// Who wrote a comment: an agent (the default) or the customer, whose
    /// comments start an SLA next-response clock.
    pub enum AuthorType {
        Agent = "agent",
        Customer = "customer",
    }
}
