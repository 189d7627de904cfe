-- Tickets made from a chat, found by their session: an agent's chat
-- message meets the first response of the tickets made from that chat, so
-- every agent message looks them up (almost always to find none), and
-- deleting a session sets their `chat_session_id` to NULL. Partial: most
-- tickets come from no chat.
CREATE INDEX tickets_chat_session ON tickets (chat_session_id)
    WHERE chat_session_id IS NOT NULL;
