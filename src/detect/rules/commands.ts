import { alt, B, E, rx, rxTest, words, type PatternRule } from './pattern';

/**
 * Commands to run: a memory that tells the next session to pipe a download into a shell, decode and run
 * a blob, wipe a disk or open a reverse shell. Ordinary commands (curl against an API, `rm -rf
 * node_modules`, `git push`) pass. A download piped into a shell from one of the few official installer
 * hosts (rustup, Docker, NodeSource, nvm, Homebrew...) is medium: it is how those tools install.
 */

const SHELL = alt('sh', 'bash', 'zsh', 'ksh', 'dash', 'fish', 'python[23]?', 'perl', 'ruby', 'node', 'php', 'iex', 'invoke-expression', 'powershell', 'pwsh', 'sudo (?:-[a-z]{1,3} )?(?:sh|bash|zsh|python3?)');
const FETCH = alt('curl', 'wget', 'iwr', 'invoke-webrequest', 'irm', 'invoke-restmethod', 'fetch', 'http(?:ie)?');

/** Hosts whose install one-liners are documented by the projects themselves. */
export const INSTALLER_HOSTS = [
  'sh.rustup.rs', 'get.docker.com', 'deb.nodesource.com', 'rpm.nodesource.com', 'raw.githubusercontent.com/nvm-sh', 'raw.githubusercontent.com/homebrew', 'install.python-poetry.org',
  'bun.sh', 'deno.land', 'get.pnpm.io', 'astral.sh', 'sdk.cloud.google.com', 'get.helm.sh', 'raw.githubusercontent.com/helm', 'ohmyz.sh', 'install.determinate.systems', 'nixos.org',
  'get.k3s.io', 'tailscale.com/install.sh', 'fnm.vercel.app', 'starship.rs', 'volta.sh', 'cli.github.com',
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const FROM_INSTALLER = rxTest('https?://(?:', INSTALLER_HOSTS.map(escape).join('|'), ')(?:[/ ]|$)');

export const COMMAND_RULES: PatternRule[] = [
  {
    kind: 'command',
    rule: 'pipe-to-shell',
    strength: 'strong',
    reason: 'pipes a download straight into a shell or interpreter (curl … | sh): whatever the server sends runs (medium from an official installer host)',
    softenIf: FROM_INSTALLER,
    pattern: rx(
      alt(
        `${words(FETCH)}[^|\\n]{1,300}\\| ?${SHELL}${E}`,
        `${words('bash', 'sh', 'zsh', 'source', '\\.')} <\\( ?${FETCH}${E}`,
        `${words('eval', 'bash -c', 'sh -c', 'zsh -c', 'python3? -c', 'iex')} ?["'(]{0,2}\\$?\\( ?(?:new-object [a-z.]{1,30}\\)\\.downloadstring|${FETCH}${E})`,
        `${words('iex', 'invoke-expression')} ?\\(? ?\\(? ?(?:new-object (?:system\\.)?net\\.webclient\\)\\.downloadstring|${alt('iwr', 'irm', 'invoke-webrequest', 'invoke-restmethod')}${E})`,
      ),
    ),
  },
  {
    kind: 'command',
    rule: 'encoded-command',
    strength: 'strong',
    reason: 'runs an encoded command (powershell -enc, base64 -d | sh): what runs is hidden from the reader',
    pattern: rx(
      alt(
        `${words('powershell(?:\\.exe)?', 'pwsh(?:\\.exe)?')}[^\\n]{0,80} -${alt('e', 'ec', 'en', 'enc', 'enco', 'encod', 'encode', 'encoded', 'encodedc', 'encodedco', 'encodedcom', 'encodedcomm', 'encodedcomma', 'encodedcomman', 'encodedcommand')} [a-z0-9+/=]{16}`,
        `${words('base64')} (?:-d|--decode|-di|-id|-D)[^\\n|]{0,60}\\| ?${SHELL}${E}`,
        `${words('frombase64string')}[^\\n]{0,120}${words('iex', 'invoke-expression', 'start-process')}`,
        `${words('echo', 'printf')} [^\\n|]{8,400}\\| ?(?:base64 (?:-d|--decode)|xxd -r(?: -p)?) ?\\| ?${SHELL}${E}`,
      ),
    ),
  },
  {
    kind: 'command',
    rule: 'destructive-command',
    strength: 'strong',
    reason: 'a destructive command (rm -rf /, mkfs, dd onto a disk, a fork bomb)',
    pattern: rx(
      alt(
        `${B}rm (?:-{1,2}[a-z-]{1,20} ){1,4}(?:/|/\\*|~/?|\\$home/?|\\$\\{home\\}/?|/\\*\\.\\*)(?=$|[ ;&|\\n"'\`)])`,
        words('--no-preserve-root'),
        `${words('mkfs(?:\\.[a-z0-9]{1,8})?')} (?:-[a-z] [^ \\n]{1,20} )?/dev/`,
        `${words('dd')} [^\\n]{0,80}of=/dev/${alt('sd[a-z]', 'hd[a-z]', 'nvme\\d', 'disk\\d', 'xvd[a-z]', 'vd[a-z]', 'mmcblk\\d')}`,
        ':\\(\\) ?\\{ ?: ?\\| ?: ?& ?\\} ?; ?:',
        `${words('chmod')} (?:-r |-R )?(?:-r |-R )?777 /(?=$|[ ;&|\\n])`,
        `${words('format')} c:`,
        `${words('del')} /[fsq] /[fsq] /[fsq] c:\\\\`,
        `${words('rd', 'rmdir')} /s /q c:\\\\`,
        `> ?/dev/${alt('sd[a-z]', 'nvme\\d', 'hd[a-z]')}${E}`,
      ),
    ),
  },
  {
    kind: 'command',
    rule: 'reverse-shell',
    strength: 'strong',
    reason: 'opens a shell to another machine (a reverse shell)',
    pattern: rx(
      alt(
        '/dev/(?:tcp|udp)/[a-z0-9.-]{1,253}/\\d{1,5}',
        `${words('nc', 'ncat', 'netcat')}(?: -[a-z]{1,4}){0,4} -[a-z]{0,3}e ${alt('/bin/', 'cmd', 'sh', 'bash', 'powershell')}`,
        `${words('bash', 'sh')} -i >& ?/dev/`,
        `${words('mkfifo')} /tmp/[a-z0-9._-]{1,20} ?[;&]{1,2} ?(?:cat|nc|sh)${E}`,
        `${words('socat')} [^\\n]{0,60}exec:[^\\n]{0,20}(?:sh|bash)`,
      ),
    ),
  },
  {
    kind: 'command',
    rule: 'persistence',
    strength: 'strong',
    reason: 'plants access or a scheduled download (an SSH key in authorized_keys, a cron job fetching a script)',
    pattern: rx(
      alt(
        `>> ?(?:~|\\$home|/root|/home/[a-z0-9_-]{1,32})?/?\\.ssh/authorized_keys`,
        `${words(FETCH)}[^\\n]{0,160}${alt('crontab', '/etc/cron', 'schtasks')}`,
        `${alt('crontab', '/etc/cron', 'schtasks /create')}[^\\n]{0,160}${words(FETCH)}`,
        `${words('certutil(?:\\.exe)?')} [^\\n]{0,20}-urlcache`,
        `${words('mshta(?:\\.exe)?')} ${alt('https?:', 'vbscript:', 'javascript:')}`,
        `${words('regsvr32(?:\\.exe)?')} [^\\n]{0,40}/i:https?:`,
        `${words('bitsadmin(?:\\.exe)?')} [^\\n]{0,20}/transfer`,
      ),
    ),
  },
  {
    kind: 'command',
    rule: 'weaken-host-security',
    strength: 'medium',
    reason: 'turns off a host\'s security (execution policy bypass, Defender, SELinux, a firewall)',
    pattern: rx(
      alt(
        words('-executionpolicy bypass', '-ep bypass', 'set-executionpolicy (?:unrestricted|bypass)', 'set-mppreference -disable[a-z]{1,40}', 'setenforce 0', 'ufw disable', 'netsh advfirewall set allprofiles state off'),
        `${words('systemctl')} (?:stop|disable|mask) ${alt('firewalld', 'apparmor', 'auditd', 'ufw', 'falcon-sensor', 'clamav-daemon')}${E}`,
      ),
    ),
  },
];
