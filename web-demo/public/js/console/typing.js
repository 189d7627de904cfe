// Typing indicators: in the session list for visitors, in the open thread
// for visitors and teammates.

const TYPING_SHOWN_MS = 4000;

/** Sets this part up on the console `c` and adds its functions to it. */
export function setUpTyping(c) {
  const { el, s, me } = c;
  Object.assign(c, { onTyping, stopTyping });

  function onTyping(data) {
    const sessionId = data.sessionId;
    if (data.senderType !== 'visitor') {
      if (sessionId === s.openId && data.senderId && data.senderId !== me.id) {
        const name = s.team.get(data.senderId)?.name ?? 'A teammate';
        showThreadTyping(`${name} is typing…`);
      }
      return;
    }
    clearTimeout(s.typingIn.get(sessionId));
    s.typingIn.set(
      sessionId,
      setTimeout(() => stopTyping(sessionId), TYPING_SHOWN_MS),
    );
    if (sessionId === s.openId) showThreadTyping(`${s.open?.visitorName ?? 'Visitor'} is typing…`);
    c.renderSessions();
  }

  function stopTyping(sessionId) {
    clearTimeout(s.typingIn.get(sessionId));
    if (s.typingIn.delete(sessionId)) c.renderSessions();
    if (sessionId === s.openId) el.typing.hidden = true;
  }

  let threadTypingTimer = null;
  function showThreadTyping(text) {
    el.typingText.textContent = text;
    el.typing.hidden = false;
    clearTimeout(threadTypingTimer);
    threadTypingTimer = setTimeout(() => {
      el.typing.hidden = true;
    }, TYPING_SHOWN_MS);
  }
}
