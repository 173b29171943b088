// Renderer entry: picks the API transport and mounts the UI.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createClient } from './api/client';
import { App } from './app';
import { warmMarkdown } from './components/markdown';
import { setApiClient } from './state/client';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

setApiClient(createClient());
createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
warmMarkdown();
