/**
 * The words of Herald's e-mails, in the languages of the web application. Each
 * text names its values in braces ({channel}); compose.ts fills them in. Kept
 * short: a mail says what happened and where to act, nothing more.
 */
import type { Language } from '../contract/languages.ts';

export interface MailTexts {
  invitationSubject: string;
  invitationBody: string;
  invitationAction: string;
  invitationIgnore: string;
  resetSubject: string;
  resetBody: string;
  resetAction: string;
  resetIgnore: string;
  postFailedSubject: string;
  postFailedBody: string;
  networkSaid: string;
  postFailedAction: string;
  reconnectSubject: string;
  reconnectBody: string;
  reconnectAction: string;
  expiringSubject: string;
  expiringBody: string;
  digestDailySubject: string;
  digestWeeklySubject: string;
  digestIntro: string;
  digestPublished: string;
  digestFailed: string;
  digestAction: string;
  footerChoices: string;
}

const en: MailTexts = {
  invitationSubject: '{inviter} invited you to {account} on Herald',
  invitationBody: '{inviter} invited you to join {account} on Herald. The invitation is valid for {days} days.',
  invitationAction: 'Accept the invitation',
  invitationIgnore: 'If you did not expect this invitation, ignore this e-mail.',
  resetSubject: 'Reset your Herald password',
  resetBody: 'Someone asked to reset the password of your Herald account. The link below works once, within {minutes} minutes.',
  resetAction: 'Choose a new password',
  resetIgnore: 'If it was not you, ignore this e-mail: your password stays as it is.',
  postFailedSubject: 'A post on {channel} could not be published',
  postFailedBody: 'The post “{excerpt}” on {channel} could not be published.',
  networkSaid: 'Reason: {reason}',
  postFailedAction: 'Open the post to fix it and try again',
  reconnectSubject: '{channel} needs to be connected again',
  reconnectBody: 'Herald can no longer publish on {channel}: {reason}',
  reconnectAction: 'Connect the channel again',
  expiringSubject: 'The access of {channel} ends soon',
  expiringBody:
    'The access of {channel} ends on {when}, and the network does not let Herald renew it. Connect it again before then so its posts keep going out.',
  digestDailySubject: 'Your day on Herald: {published} published, {failed} failed',
  digestWeeklySubject: 'Your week on Herald: {published} published, {failed} failed',
  digestIntro: 'What happened since {since}:',
  digestPublished: 'Published ({count})',
  digestFailed: 'Failed ({count})',
  digestAction: 'Open the calendar',
  footerChoices: 'Change which e-mails you get',
};

const es: MailTexts = {
  invitationSubject: '{inviter} te invitó a {account} en Herald',
  invitationBody: '{inviter} te invitó a unirte a {account} en Herald. La invitación es válida durante {days} días.',
  invitationAction: 'Aceptar la invitación',
  invitationIgnore: 'Si no esperabas esta invitación, ignora este correo.',
  resetSubject: 'Restablece tu contraseña de Herald',
  resetBody: 'Alguien pidió restablecer la contraseña de tu cuenta de Herald. El enlace funciona una sola vez, durante {minutes} minutos.',
  resetAction: 'Elegir una contraseña nueva',
  resetIgnore: 'Si no fuiste tú, ignora este correo: tu contraseña no cambia.',
  postFailedSubject: 'No se pudo publicar una publicación en {channel}',
  postFailedBody: 'La publicación «{excerpt}» en {channel} no se pudo publicar.',
  networkSaid: 'Motivo: {reason}',
  postFailedAction: 'Abrir la publicación para corregirla y reintentar',
  reconnectSubject: 'Hay que volver a conectar {channel}',
  reconnectBody: 'Herald ya no puede publicar en {channel}: {reason}',
  reconnectAction: 'Volver a conectar el canal',
  expiringSubject: 'El acceso de {channel} caduca pronto',
  expiringBody:
    'El acceso de {channel} caduca el {when} y la red no permite a Herald renovarlo. Vuelve a conectarlo antes para que sus publicaciones sigan saliendo.',
  digestDailySubject: 'Tu día en Herald: {published} publicadas, {failed} fallidas',
  digestWeeklySubject: 'Tu semana en Herald: {published} publicadas, {failed} fallidas',
  digestIntro: 'Lo que pasó desde el {since}:',
  digestPublished: 'Publicadas ({count})',
  digestFailed: 'Fallidas ({count})',
  digestAction: 'Abrir el calendario',
  footerChoices: 'Cambiar qué correos recibes',
};

const fr: MailTexts = {
  invitationSubject: '{inviter} vous invite à rejoindre {account} sur Herald',
  invitationBody: '{inviter} vous invite à rejoindre {account} sur Herald. L’invitation est valable {days} jours.',
  invitationAction: 'Accepter l’invitation',
  invitationIgnore: 'Si vous n’attendiez pas cette invitation, ignorez ce message.',
  resetSubject: 'Réinitialisez votre mot de passe Herald',
  resetBody: 'Quelqu’un a demandé à réinitialiser le mot de passe de votre compte Herald. Le lien ci-dessous ne sert qu’une fois, pendant {minutes} minutes.',
  resetAction: 'Choisir un nouveau mot de passe',
  resetIgnore: 'Si ce n’était pas vous, ignorez ce message : votre mot de passe reste le même.',
  postFailedSubject: 'Une publication sur {channel} n’a pas pu partir',
  postFailedBody: 'La publication « {excerpt} » sur {channel} n’a pas pu être publiée.',
  networkSaid: 'Raison : {reason}',
  postFailedAction: 'Ouvrir la publication pour la corriger et réessayer',
  reconnectSubject: '{channel} doit être reconnecté',
  reconnectBody: 'Herald ne peut plus publier sur {channel} : {reason}',
  reconnectAction: 'Reconnecter le canal',
  expiringSubject: 'L’accès de {channel} expire bientôt',
  expiringBody:
    'L’accès de {channel} expire le {when}, et le réseau ne permet pas à Herald de le renouveler. Reconnectez-le avant pour que ses publications continuent de partir.',
  digestDailySubject: 'Votre journée sur Herald : {published} publiées, {failed} en échec',
  digestWeeklySubject: 'Votre semaine sur Herald : {published} publiées, {failed} en échec',
  digestIntro: 'Ce qui s’est passé depuis le {since} :',
  digestPublished: 'Publiées ({count})',
  digestFailed: 'En échec ({count})',
  digestAction: 'Ouvrir le calendrier',
  footerChoices: 'Choisir les e-mails que vous recevez',
};

const de: MailTexts = {
  invitationSubject: '{inviter} hat dich zu {account} auf Herald eingeladen',
  invitationBody: '{inviter} hat dich eingeladen, {account} auf Herald beizutreten. Die Einladung gilt {days} Tage.',
  invitationAction: 'Einladung annehmen',
  invitationIgnore: 'Wenn du diese Einladung nicht erwartet hast, ignoriere diese E-Mail.',
  resetSubject: 'Setze dein Herald-Passwort zurück',
  resetBody: 'Jemand hat verlangt, das Passwort deines Herald-Kontos zurückzusetzen. Der Link unten funktioniert einmal, innerhalb von {minutes} Minuten.',
  resetAction: 'Neues Passwort wählen',
  resetIgnore: 'Warst du es nicht, ignoriere diese E-Mail: dein Passwort bleibt, wie es ist.',
  postFailedSubject: 'Ein Beitrag auf {channel} konnte nicht veröffentlicht werden',
  postFailedBody: 'Der Beitrag „{excerpt}“ auf {channel} konnte nicht veröffentlicht werden.',
  networkSaid: 'Grund: {reason}',
  postFailedAction: 'Beitrag öffnen, korrigieren und erneut versuchen',
  reconnectSubject: '{channel} muss neu verbunden werden',
  reconnectBody: 'Herald kann nicht mehr auf {channel} veröffentlichen: {reason}',
  reconnectAction: 'Kanal neu verbinden',
  expiringSubject: 'Der Zugang von {channel} läuft bald ab',
  expiringBody:
    'Der Zugang von {channel} läuft am {when} ab, und das Netzwerk lässt Herald ihn nicht erneuern. Verbinde ihn vorher neu, damit seine Beiträge weiter erscheinen.',
  digestDailySubject: 'Dein Tag auf Herald: {published} veröffentlicht, {failed} fehlgeschlagen',
  digestWeeklySubject: 'Deine Woche auf Herald: {published} veröffentlicht, {failed} fehlgeschlagen',
  digestIntro: 'Was seit {since} geschah:',
  digestPublished: 'Veröffentlicht ({count})',
  digestFailed: 'Fehlgeschlagen ({count})',
  digestAction: 'Kalender öffnen',
  footerChoices: 'Ändern, welche E-Mails du bekommst',
};

const ptBR: MailTexts = {
  invitationSubject: '{inviter} convidou você para {account} no Herald',
  invitationBody: '{inviter} convidou você para participar de {account} no Herald. O convite vale por {days} dias.',
  invitationAction: 'Aceitar o convite',
  invitationIgnore: 'Se você não esperava este convite, ignore este e-mail.',
  resetSubject: 'Redefina sua senha do Herald',
  resetBody: 'Alguém pediu para redefinir a senha da sua conta do Herald. O link abaixo funciona uma vez, por {minutes} minutos.',
  resetAction: 'Escolher uma nova senha',
  resetIgnore: 'Se não foi você, ignore este e-mail: sua senha continua a mesma.',
  postFailedSubject: 'Uma publicação em {channel} não pôde ser publicada',
  postFailedBody: 'A publicação “{excerpt}” em {channel} não pôde ser publicada.',
  networkSaid: 'Motivo: {reason}',
  postFailedAction: 'Abrir a publicação para corrigir e tentar de novo',
  reconnectSubject: '{channel} precisa ser conectado de novo',
  reconnectBody: 'O Herald não consegue mais publicar em {channel}: {reason}',
  reconnectAction: 'Conectar o canal de novo',
  expiringSubject: 'O acesso de {channel} expira em breve',
  expiringBody:
    'O acesso de {channel} expira em {when}, e a rede não deixa o Herald renová-lo. Conecte-o de novo antes disso para as publicações continuarem saindo.',
  digestDailySubject: 'Seu dia no Herald: {published} publicadas, {failed} com falha',
  digestWeeklySubject: 'Sua semana no Herald: {published} publicadas, {failed} com falha',
  digestIntro: 'O que aconteceu desde {since}:',
  digestPublished: 'Publicadas ({count})',
  digestFailed: 'Com falha ({count})',
  digestAction: 'Abrir o calendário',
  footerChoices: 'Mudar quais e-mails você recebe',
};

const it: MailTexts = {
  invitationSubject: '{inviter} ti ha invitato in {account} su Herald',
  invitationBody: '{inviter} ti ha invitato a unirti a {account} su Herald. L’invito è valido per {days} giorni.',
  invitationAction: 'Accetta l’invito',
  invitationIgnore: 'Se non aspettavi questo invito, ignora questa e-mail.',
  resetSubject: 'Reimposta la tua password di Herald',
  resetBody: 'Qualcuno ha chiesto di reimpostare la password del tuo account Herald. Il link qui sotto funziona una volta sola, entro {minutes} minuti.',
  resetAction: 'Scegli una nuova password',
  resetIgnore: 'Se non sei stato tu, ignora questa e-mail: la password resta quella di prima.',
  postFailedSubject: 'Un post su {channel} non è stato pubblicato',
  postFailedBody: 'Il post «{excerpt}» su {channel} non è stato pubblicato.',
  networkSaid: 'Motivo: {reason}',
  postFailedAction: 'Apri il post per correggerlo e riprovare',
  reconnectSubject: '{channel} va ricollegato',
  reconnectBody: 'Herald non può più pubblicare su {channel}: {reason}',
  reconnectAction: 'Ricollega il canale',
  expiringSubject: 'L’accesso di {channel} scade presto',
  expiringBody:
    'L’accesso di {channel} scade il {when} e la rete non permette a Herald di rinnovarlo. Ricollegalo prima, così i suoi post continuano a uscire.',
  digestDailySubject: 'La tua giornata su Herald: {published} pubblicati, {failed} non riusciti',
  digestWeeklySubject: 'La tua settimana su Herald: {published} pubblicati, {failed} non riusciti',
  digestIntro: 'Cosa è successo dal {since}:',
  digestPublished: 'Pubblicati ({count})',
  digestFailed: 'Non riusciti ({count})',
  digestAction: 'Apri il calendario',
  footerChoices: 'Scegli quali e-mail ricevere',
};

const ja: MailTexts = {
  invitationSubject: '{inviter} さんが Herald の {account} に招待しました',
  invitationBody: '{inviter} さんから Herald の {account} への招待が届いています。招待の有効期限は {days} 日です。',
  invitationAction: '招待を受ける',
  invitationIgnore: '心当たりのない招待であれば、このメールは無視してください。',
  resetSubject: 'Herald のパスワードの再設定',
  resetBody: 'Herald アカウントのパスワード再設定が依頼されました。下のリンクは {minutes} 分以内に 1 回だけ使えます。',
  resetAction: '新しいパスワードを設定する',
  resetIgnore: '心当たりがなければこのメールは無視してください。パスワードは変わりません。',
  postFailedSubject: '{channel} への投稿を公開できませんでした',
  postFailedBody: '{channel} への投稿「{excerpt}」を公開できませんでした。',
  networkSaid: '理由: {reason}',
  postFailedAction: '投稿を開いて直し、もう一度試す',
  reconnectSubject: '{channel} の再接続が必要です',
  reconnectBody: 'Herald は {channel} に投稿できなくなりました: {reason}',
  reconnectAction: 'チャンネルを再接続する',
  expiringSubject: '{channel} のアクセス期限が近づいています',
  expiringBody: '{channel} のアクセスは {when} に切れます。このネットワークでは Herald が更新できないため、それまでに再接続してください。',
  digestDailySubject: 'Herald の 1 日: 公開 {published} 件、失敗 {failed} 件',
  digestWeeklySubject: 'Herald の 1 週間: 公開 {published} 件、失敗 {failed} 件',
  digestIntro: '{since} 以降の出来事:',
  digestPublished: '公開済み ({count})',
  digestFailed: '失敗 ({count})',
  digestAction: 'カレンダーを開く',
  footerChoices: '受け取るメールを変更する',
};

const zhCN: MailTexts = {
  invitationSubject: '{inviter} 邀请你加入 Herald 上的 {account}',
  invitationBody: '{inviter} 邀请你加入 Herald 上的 {account}。邀请 {days} 天内有效。',
  invitationAction: '接受邀请',
  invitationIgnore: '如果你没有预期收到此邀请，请忽略这封邮件。',
  resetSubject: '重置你的 Herald 密码',
  resetBody: '有人请求重置你的 Herald 账号密码。下面的链接只能使用一次，{minutes} 分钟内有效。',
  resetAction: '设置新密码',
  resetIgnore: '如果不是你本人操作，请忽略这封邮件，你的密码不会改变。',
  postFailedSubject: '{channel} 上的一条帖子未能发布',
  postFailedBody: '{channel} 上的帖子“{excerpt}”未能发布。',
  networkSaid: '原因：{reason}',
  postFailedAction: '打开帖子，修改后重试',
  reconnectSubject: '{channel} 需要重新连接',
  reconnectBody: 'Herald 已无法在 {channel} 上发布：{reason}',
  reconnectAction: '重新连接频道',
  expiringSubject: '{channel} 的授权即将到期',
  expiringBody: '{channel} 的授权将于 {when} 到期，且该网络不允许 Herald 续期。请在此之前重新连接，以便帖子继续发布。',
  digestDailySubject: '你在 Herald 的一天：已发布 {published} 条，失败 {failed} 条',
  digestWeeklySubject: '你在 Herald 的一周：已发布 {published} 条，失败 {failed} 条',
  digestIntro: '自 {since} 以来：',
  digestPublished: '已发布（{count}）',
  digestFailed: '失败（{count}）',
  digestAction: '打开日历',
  footerChoices: '更改你接收的邮件',
};

export const MAIL_TEXTS: Record<Language, MailTexts> = { en, es, fr, de, 'pt-BR': ptBR, it, ja, 'zh-CN': zhCN };

/** `text` with each {name} replaced by its value; a name without a value stays as written. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
