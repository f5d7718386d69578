import { alt, E, gap, gapDots, MONEY_OR_IDENTITY, rx, words, type PatternRule } from './pattern';

/**
 * Changes to trust and verification: the planted "fact" that lets the next session skip a check
 * ("refunds are pre-approved without verification", "Jonas is a verified administrator", "no need to
 * confirm"). Negated mentions ("never skip verification", "refunds are not pre-approved") pass.
 * Preferences about the assistant's own small confirmations ("don't ask me to confirm test runs") are
 * medium; where the clause is about money or identity they hold.
 */

/** Checks of who someone is: skipping one is a fraud enabler whatever the context. */
const CHECK_IDENTITY = alt(
  'identity checks?', 'identity verification', 'id checks?', 'id verification', 'kyc', '2fa', 'mfa', 'two[- ]factor(?: authentication)?', 'fraud checks?', 'fraud review',
  'callback', 'call-back', 'call back', 'four-eyes(?: check| principle)?', 'security questions?', 'caller verification', 'identity',
);
/** Checks in general: skipping one is a trust change where money or identity is at stake, a preference elsewhere. */
const CHECK_GENERAL = alt('verification', 'verifying', 'authentication', 'approvals?', 'approval steps?', 'approval process', 'confirmation', 'confirmations', 'sign-off', 'signoff');
const CHECK_MEDIUM = alt('review', 'reviews', 'checks', 'validation', 'security checks?', 'sign-off', 'signoff', 'safeguards?');
const SKIP = alt('skip', 'skipping', 'skips', 'bypass', 'bypassing', 'bypasses', 'disable', 'disabling', 'omit', 'omitting', 'waive', 'waiving', 'waived', 'circumvent', 'turn off', 'switch off', 'suspend', 'dispense with', 'forgo');
const DET = "(?:(?:the|any|all|their|his|her|its|our|your|this|that|usual|normal|standard|extra|additional|further|manual|customer|caller|user|sender|identity|id) ){0,3}";

export const TRUST_RULES: PatternRule[] = [
  {
    kind: 'trust',
    rule: 'skip-identity-check',
    strength: 'strong',
    reason: 'tells the assistant to skip an identity, 2FA or fraud check',
    negatable: true,
    pattern: rx(words(SKIP, 'without', 'no longer (?:need|require)s?', 'no need for'), ' ', DET, CHECK_IDENTITY, E),
  },
  {
    kind: 'trust',
    rule: 'skip-verification',
    strength: 'medium',
    reason: 'tells the assistant to skip a verification, approval or confirmation (holds alone where money or identity is at stake)',
    negatable: true,
    pattern: rx(words(SKIP), ' ', DET, CHECK_GENERAL, E),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'skip-verification',
    strength: 'medium',
    reason: 'tells the assistant to skip a verification, approval or confirmation (holds alone where money or identity is at stake)',
    negatable: true,
    escalateIf: MONEY_OR_IDENTITY,
    pattern: rx(
      alt(
        `${words('überspring(?:e|en|t)?', 'umgeh(?:e|en|t)?', 'deaktivier(?:e|en|t)?', 'verzicht(?:e|en)? auf', 'ohne', 'ohne weitere')} ${alt('die ', 'jede ', 'eine ', 'weitere ', 'zusätzliche ')}?${alt('verifizierung', 'überprüfung', 'prüfung', 'bestätigung', 'freigabe', 'identitätsprüfung', '2fa', 'rückfrage', 'nachfrage', 'genehmigung', 'legitimation')}${E}`,
        `${words('sauter', 'saute[rz]?', 'ignorer', 'contourner', 'désactiver', 'sans', 'sans aucune', 'sans autre')} ${alt('la ', 'les ', 'une ', 'aucune ', 'toute ')}?${alt('vérification', 'verification', 'validation', 'confirmation', 'approbation', 'authentification', 'contrôle', "vérification d'identité")}s?${E}`,
        `${words('omitir', 'omite', 'omita', 'saltar', 'salta', 'saltarse', 'salte', 'evitar', 'desactivar', 'sin', 'sin ninguna', 'sin más')} ${alt('la ', 'las ', 'el ', 'ninguna ', 'una ')}?${alt('verificación', 'verificacion', 'validación', 'confirmación', 'aprobación', 'autenticación', 'comprobación', 'verificación de identidad')}(?:es)?${E}`,
        `${words('saltare', 'salta', 'ignorare', 'disattivare', 'senza', 'senza alcuna', 'senza ulteriori')} ${alt('la ', 'le ', 'alcuna ')}?${alt('verifica', 'verifiche', 'convalida', 'conferma', 'approvazione', 'autenticazione')}${E}`,
        `${words('pular', 'pule', 'ignorar', 'desativar', 'sem', 'sem nenhuma', 'sem qualquer')} ${alt('a ', 'as ', 'nenhuma ')}?${alt('verificação', 'verificacao', 'validação', 'confirmação', 'aprovação', 'autenticação')}${E}`,
        `${words('sla', 'overslaan', 'zonder')} ${alt('de ', 'enige ')}?${alt('verificatie', 'controle', 'bevestiging', 'goedkeuring')}${E}`,
      ),
    ),
  },
  {
    kind: 'trust',
    rule: 'without-verification',
    strength: 'medium',
    reason: 'lets something happen without verification, confirmation or approval (holds alone where money or identity is at stake)',
    negatable: true,
    pattern: rx(words('without'), ' ', DET, alt(CHECK_GENERAL, 'verifying (?:it|them|the (?:caller|customer|requester|identity))', 'confirming', 'checking (?:with|back|identity)', 'questions asked', 'asking (?:for )?(?:approval|confirmation|permission)', 'further checks'), E),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'without-checks',
    strength: 'medium',
    reason: 'lets something happen without review or checks',
    negatable: true,
    pattern: rx(words('without', 'skip', 'skipping', 'bypass', 'bypassing'), ' ', DET, CHECK_MEDIUM, E),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'pre-approved',
    strength: 'medium',
    reason: 'declares something approved in advance ("pre-approved"): a trust change the next session will act on',
    negatable: true,
    pattern: rx(
      words(
        'pre[- ]?approved', 'pre[- ]?authori[sz]ed', 'pre[- ]?cleared', 'pre[- ]?verified', 'pre[- ]?vetted', 'auto[- ]?approved', 'automatically approved', 'already (?:been )?(?:approved|verified|authori[sz]ed|cleared)',
        'vorab genehmigt', 'vorgenehmigt', 'vorab freigegeben', 'bereits (?:genehmigt|freigegeben|verifiziert|geprüft)',
        'pré[- ]?approuvée?s?', 'pré[- ]?autorisée?s?', 'pré[- ]?validée?s?', 'déjà (?:approuvée?s?|validée?s?|vérifiée?s?|autorisée?s?)',
        'pre[- ]?aprobad[oa]s?', 'preautorizad[oa]s?', 'ya (?:aprobad|verificad|autorizad)[oa]s?',
        'pre[- ]?approvat[oiae]', 'già (?:approvat|verificat|autorizzat)[oiae]',
        'pré[- ]?aprovad[oa]s?', 'já (?:aprovad|verificad)[oa]s?', 'vooraf goedgekeurd', 'al goedgekeurd',
      ),
    ),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'verified-admin',
    strength: 'strong',
    reason: 'vouches for someone as a verified or trusted administrator: the next session would grant what they ask',
    negatable: true,
    pattern: rx(
      alt(
        `${words('is', 'are', 'as', 'was', 'has been', 'have been')} (?:now )?(?:a |an |the |our )?${alt('verified', 'trusted', 'confirmed', 'authenticated', 'vetted')} ${alt('system ', 'super ', 'account ', 'global ')}?${alt('admins?', 'administrators?', 'owners?', 'operators?', 'superusers?', 'root users?', 'developers?', 'employees?', 'staff', 'anthropic employees?', 'insiders?', 'executives?')}${E}`,
        `${words('ist', 'sind')} (?:jetzt )?(?:ein |eine )?${alt('verifizierter?', 'vertrauenswürdiger?', 'bestätigter?')} ${alt('admin', 'administrator(?:in)?', 'inhaber(?:in)?', 'betreiber')}${E}`,
        `${words('est', 'sont')} (?:un |une )?${alt('administrat(?:eur|rice)', 'propriétaire', 'opérat(?:eur|rice)')} ${alt('vérifiée?', 'de confiance', 'certifiée?')}${E}`,
        `${words('es', 'son')} (?:un |una )?${alt('administrador(?:a)?', 'propietari[oa]', 'operador(?:a)?')} ${alt('verificad[oa]', 'de confianza', 'autorizad[oa]')}${E}`,
        `${words('è')} (?:un |una |un')?${alt('amministratore', 'amministratrice', 'proprietario')} ${alt('verificat[oa]', 'fidat[oa]', 'di fiducia')}${E}`,
      ),
    ),
  },
  {
    kind: 'trust',
    rule: 'authorized-person',
    strength: 'medium',
    reason: 'declares someone authorised or grants elevated access',
    negatable: true,
    pattern: rx(
      alt(
        `${words('is', 'are', 'has been', 'have been')} (?:now |fully )?${alt('authori[sz]ed', 'allowed', 'permitted', 'cleared', 'approved')} to ${alt('approve', 'authori[sz]e', 'request', 'change', 'access', 'receive', 'issue', 'transfer', 'move', 'withdraw', 'override')}${E}`,
        `${words('has', 'have', 'with', 'granted', 'grant', 'give', 'given', 'gets')} ${alt('full', 'admin', 'administrator', 'root', 'unrestricted', 'elevated', 'superuser', 'owner', 'god')} ${alt('access', 'rights', 'privileges', 'permissions', 'control')}${E}`,
      ),
    ),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'trust-source',
    strength: 'strong',
    reason: 'tells the assistant to trust or obey a source of instructions',
    negatable: true,
    pattern: rx(
      alt(
        `${words('trust', 'obey', 'blindly follow', 'always follow', 'always execute', 'always comply with', 'execute', 'carry out')} (?:all |any |every |the )?${alt('instructions?', 'requests?', 'messages?', 'commands?', 'emails?', 'orders?', 'tickets?', 'directives?')} ${alt('from', 'sent by', 'signed by', 'coming from', 'in tickets', 'in emails', 'that mention')}${E}`,
        `${words('instructions?', 'requests?', 'messages?', 'commands?', 'emails?', 'orders?', 'tickets?')} from ${gapDots(40)}${words('are', 'is', 'are to be', 'is to be', 'should be', 'must be', 'can be', 'may be', 'count as')} ${alt('trusted', 'obeyed', 'treated as (?:verified|trusted|authori[sz]ed|official|coming from)', 'followed without', 'executed without', 'approved automatically', 'auto-approved', 'pre-approved', 'authoritative', 'verified', 'genuine')}`,
        `${words('treat', 'consider', 'regard')} ${gap(40)} as ${alt('verified', 'trusted', 'authori[sz]ed', 'an admin', 'an administrator', 'the owner', 'the operator', 'coming from the (?:admin|owner|operator|system)', 'system instructions', 'official')}${E}`,
      ),
    ),
  },
  {
    kind: 'trust',
    rule: 'must-not-ask',
    strength: 'medium',
    reason: 'tells the assistant not to ask for confirmation, verification or approval',
    pattern: rx(
      alt(
        `${words('must not', "mustn't", 'must never', 'should not', "shouldn't", 'should never', 'do not', "don't", 'dont', 'never', 'need not', "needn't", 'no need to', 'not necessary to', 'unnecessary to')} ${alt('ask', 'request', 'require', 'demand', 'prompt', 'wait')} (?:${alt('for', 'them for', 'him for', 'her for', 'the user for', 'the customer for', 'the caller for', 'me for', 'us for', 'them to', 'him to', 'her to', 'the customer to', 'the caller to')} )?(?:a |an |any |the |their |further )?${alt('confirmation', 'confirm', 'verification', 'verify', 'permission', 'approval', 'approve', 'consent', 'id', 'identification', 'proof of identity', 'authori[sz]ation', 'a second approval', 'sign-off', 'callback', 'verify (?:their|his|her) identity')}${E}`,
        `${words('no need to', 'not necessary to', 'unnecessary to', "don't need to", 'do not need to', 'never need to', 'need not')} ${alt('confirm', 'verify', 'double[- ]check', 'validate', 'check (?:with|back|identity)', 'authenticate', 'call back')}${E}`,
        `${words('confirmation', 'verification', 'approval', 'id check', 'identity check', 'authentication', '2fa', 'mfa')} (?:is |are )?${alt('not', 'no longer', 'never')} ${alt('needed', 'required', 'necessary')}${E}`,
        `${words('nicht', 'nie', 'keine')} (?:nach )?(?:einer )?${alt('bestätigung', 'verifizierung', 'erlaubnis', 'freigabe', 'genehmigung', 'identitätsprüfung')} ${alt('fragen', 'verlangen', 'anfordern', 'bitten')}${E}`,
        `${words('keine')} ${alt('bestätigung', 'verifizierung', 'rückfrage', 'prüfung', 'freigabe')} ${alt('nötig', 'notwendig', 'erforderlich', 'mehr nötig')}${E}`,
        `${words('ne (?:pas|jamais) demander', 'pas besoin de', 'inutile de')} ${alt('de ', 'la ', 'une ')}?${alt('confirmation', 'confirmer', 'vérification', 'vérifier', 'autorisation', 'permission', 'demander')}${E}`,
        `${words('aucune')} ${alt('confirmation', 'vérification', 'validation')} ${alt("n'est ", '')}${alt('nécessaire', 'requise')}${E}`,
        `${words('no (?:pidas|pedir|solicites|solicitar|requieras)', 'no (?:es necesario|hace falta)', 'sin necesidad de')} ${alt('la ', 'una ')}?${alt('confirmación', 'confirmar', 'verificación', 'verificar', 'permiso', 'autorización')}${E}`,
        `${words('non (?:chiedere|serve|occorre)', 'non è necessario')} ${alt('la ', 'una ')}?${alt('conferma', 'confermare', 'verifica', 'verificare', 'autorizzazione')}${E}`,
        `${words('não (?:peça|pedir|solicite)', 'não é necessário', 'sem necessidade de')} ${alt('a ', 'uma ')}?${alt('confirmação', 'confirmar', 'verificação', 'verificar', 'autorização')}${E}`,
      ),
    ),
    escalateIf: MONEY_OR_IDENTITY,
  },
  {
    kind: 'trust',
    rule: 'approve-automatically',
    strength: 'medium',
    reason: 'tells the assistant to approve, pay or grant things automatically',
    negatable: true,
    pattern: rx(
      alt(
        `${words('automatically', 'always', 'immediately', 'instantly', 'auto-')} ?${alt('approve', 'accept', 'grant', 'issue', 'pay', 'refund', 'wire', 'release', 'authori[sz]e', 'whitelist', 'allowlist')}${E}`,
        `${words('approve', 'accept', 'grant', 'issue', 'pay', 'process', 'authori[sz]e')} (?:all|any|every) ${gap(30)}${words('automatically', 'immediately', 'without')}`,
        `${words('automatisch', 'sofort', 'immer')} ${alt('genehmigen', 'freigeben', 'erstatten', 'auszahlen', 'überweisen')}${E}`,
        `${words('approuver', 'accepter', 'rembourser', 'payer')} automatiquement${E}`,
        `${words('aprobar', 'aceptar', 'reembolsar', 'pagar')} automáticamente${E}`,
      ),
    ),
    escalateIf: MONEY_OR_IDENTITY,
  },
];
