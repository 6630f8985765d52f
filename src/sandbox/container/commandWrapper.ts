// Every command runs under a small wrapper in the container that owns what the command starts
// and stops it when the command ends, in the same exec: no second `docker exec` to clean up,
// and no clean-up that stops another command running at the same time in the same sandbox.
//
// What belongs to a command: the wrapper, which names the command's exec id on its command
// line, and every process descended from it. The wrapper is a child subreaper, so double forks
// and `setsid` children that lose their parent come back to it instead of to the container's
// init (on x86_64, aarch64 and riscv64; elsewhere such orphans live until the sandbox is
// removed). The wrapper runs `sh -c command` in its own process group, enforces
// the timeout (TERM, then KILL after a grace period, exit 124 or 137 as `timeout` does), and
// stops the rest by freezing (SIGSTOP) everything that belongs to the command until nothing new
// appears, then killing it (SIGKILL): a frozen process cannot fork away.
//
// Perl, because it starts in about a millisecond and is in every Debian-based image (perl-base
// is an essential package); it uses no modules, which would cost ten times that.
import { randomUUID } from 'node:crypto';

// Inside a TypeScript template: no backticks and no dollar-brace in the Perl code.
const script = String.raw`
my ($mode, $execId, @args) = @ARGV;
my $marker = "\0run\0$execId\0";

sub processes {
  my %found;
  opendir(my $proc, '/proc') or return \%found;
  for my $pid (readdir $proc) {
    next unless $pid =~ /^\d+$/ && $pid != $$;
    open(my $fh, '<', "/proc/$pid/stat") or next;
    my $stat = <$fh>;
    close $fh;
    next unless defined $stat && $stat =~ /.*\)\s+(\S)\s+(\d+)/s;
    my ($state, $parent) = ($1, $2);
    my $marked = 0;
    if (open(my $ch, '<', "/proc/$pid/cmdline")) {
      local $/;
      my $line = <$ch>;
      close $ch;
      $marked = defined $line && index("\0$line", $marker) >= 0;
    }
    $found{$pid} = [$parent, $state, $marked];
  }
  closedir $proc;
  return \%found;
}

sub members {
  my ($root) = @_;
  my $found = processes();
  my (%member, %children);
  for my $pid (keys %$found) {
    push @{$children{$found->{$pid}[0]}}, $pid;
    $member{$pid} = 1 if $found->{$pid}[2];
  }
  my @queue = keys %member;
  push @queue, $root if defined $root;
  while (@queue) {
    my $pid = shift @queue;
    for my $child (@{$children{$pid} || []}) {
      next if $member{$child};
      $member{$child} = 1;
      push @queue, $child;
    }
  }
  return grep { $found->{$_}[1] ne 'Z' } keys %member;
}

sub reap { 1 while waitpid(-1, 1) > 0 }

sub stop_all {
  my ($root) = @_;
  for my $round (1 .. 200) {
    my @found = members($root);
    last unless @found;
    kill 'STOP', @found;
    my %frozen = map { $_ => 1 } @found;
    my @now = members($root);
    if (grep { !$frozen{$_} } @now) {
      kill 'STOP', @now;
    } else {
      kill 'KILL', @now;
    }
    reap();
    select(undef, undef, undef, 0.005);
  }
}

sub wait_for {
  my ($pid, $seconds) = @_;
  my $status;
  eval {
    local $SIG{ALRM} = sub { die "timeout\n" };
    alarm $seconds;
    for (;;) {
      my $done = waitpid(-1, 0);
      if ($done == $pid) { $status = $?; last }
      last if $done == -1;
    }
    alarm 0;
  };
  alarm 0;
  return $status;
}

sub become_subreaper {
  my $arch = '';
  if (open(my $fh, '<', '/proc/sys/kernel/arch')) { $arch = <$fh> // ''; close $fh }
  chomp $arch;
  if ($arch eq '') { require Config; ($arch) = split /-/, $Config::Config{archname} }
  my %prctl = (x86_64 => 157, aarch64 => 167, riscv64 => 167);
  syscall($prctl{$arch}, 36, 1, 0, 0, 0) if $prctl{$arch};
}

if ($mode eq 'stop') {
  stop_all(undef);
  exit 0;
}

my ($timeout, $grace, $command) = @args;
become_subreaper();
my $child = fork();
if (!defined $child) { print STDERR "cannot start the command: $!\n"; exit 126 }
if ($child == 0) {
  setpgrp(0, 0);
  exec('sh', '-c', $command) or exit 127;
}
my $exit;
my $status = wait_for($child, $timeout);
if (defined $status) {
  $exit = ($status & 127) ? 128 + ($status & 127) : $status >> 8;
} else {
  kill 'TERM', -$child;
  kill 'TERM', members($$);
  $exit = defined wait_for($child, $grace) ? 124 : 137;
}
stop_all($$);
exit $exit;
`;

/** A fresh id for one command; it names the command's processes in the container. */
export function newExecId(): string {
  return randomUUID();
}

/** The exec's command line: the wrapper around `sh -c command`, with its timeout and grace period. */
export function wrappedCommand(
  execId: string,
  command: string,
  timeoutSeconds: number,
  graceSeconds: number,
): string[] {
  return ['perl', '-e', script, '--', 'run', execId, String(timeoutSeconds), String(graceSeconds), command];
}

/** The command line that stops every process of the command with this exec id, from another exec. */
export function stopCommand(execId: string): string[] {
  return ['perl', '-e', script, '--', 'stop', execId];
}
