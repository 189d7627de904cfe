-- 10,000 knowledge-base articles (90% published) in 8 categories of the
-- benchmark company's entity (live mode): the set GET /kb/search ranks.
-- Title: 3-7 words, content: 40-120 words, drawn from a vocabulary of
-- support words, so a two-word query matches several hundred articles.
-- Variables: company, entity.

CREATE TEMP TABLE seed_vocab AS
SELECT string_to_array('access account activate address admin alert android api app apple approve archive attach attachment audit backup balance bank billing block bookmark browser bug cache calendar camera cancel card cart certificate change charge chat checkout chrome cleanup client code colleague column comment company configure confirm connect contact contract cookie copy country coupon create credit csv currency customer dashboard data date deactivate default delete delivery desktop device discount display document domain download draft duplicate edit email enable encrypt error event expire export factor failed feature fee field file filter firewall folder font form format forward free gateway group guest help history holiday home icon import inbox install integration invite invoice ip item key label language laptop layout license limit link list locked login logo logout mailbox manage manual member merge message migrate mobile monthly network notification number offline onboarding order owner package page password payment pdf pending permission phone photo plan policy portal preferences premium price print privacy profile promo purchase queue quota receipt refund region register reminder remove renew report request reset restore return role router safari schedule screen search security server session settings setup share shipping signature signup size slow sms software spam speed ssl status storage subscription support sync tablet tax team template terms theme ticket timezone token tracking trial two update upgrade upload user username verify video voucher wallet warranty webhook website widget window wireless workspace yearly zone', ' ') AS w;

INSERT INTO kb_categories (id, company_id, mode, entity_id, name, slug, created_at, updated_at)
SELECT gen_random_uuid(), :'company', 'live', :'entity', name, lower(replace(name, ' ', '-')), now(), now()
FROM unnest(ARRAY['Getting started', 'Account', 'Billing', 'Orders and shipping', 'Security',
                  'Integrations', 'Mobile apps', 'Troubleshooting']) AS name;

CREATE TEMP TABLE seed_articles AS
SELECT g,
       (SELECT initcap(string_agg(v.w[1 + floor(random() * array_length(v.w, 1))::int], ' '))
        FROM seed_vocab AS v, generate_series(1, 3 + g % 5) WHERE g > 0) AS title,
       (SELECT string_agg(v.w[1 + floor(random() * array_length(v.w, 1))::int], ' ')
        FROM seed_vocab AS v, generate_series(1, 40 + (g * 37) % 81) WHERE g > 0) AS body
FROM generate_series(1, 10000) AS g;

INSERT INTO kb_articles (id, company_id, mode, entity_id, category_id, title, slug, content,
                         content_text, excerpt, is_published, created_at, updated_at)
SELECT gen_random_uuid(), :'company', 'live', :'entity',
       (SELECT id FROM kb_categories WHERE entity_id = :'entity' ORDER BY name OFFSET g % 8 LIMIT 1),
       title, 'article-' || g,
       '## ' || title || E'\n\n' || body || '.',
       title || ' ' || body || '.',
       left(body, 160),
       g % 10 <> 0,
       now() - (10001 - g) * interval '10 minutes',
       now() - (10001 - g) * interval '10 minutes'
FROM seed_articles;
